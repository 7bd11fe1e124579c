import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`bash scripts/chromium.sh`); never a browser a tool downloads. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether the browser suites can run, and whether they must (CI=true). Prints why a suite is
 * skipped on a developer's machine without Chromium.
 */
export function probeChromium(suite: string): { available: boolean; required: boolean } {
  const available = existsSync(CHROMIUM);
  const required = process.env.CI === 'true';
  if (!available && !required) {
    console.warn(
      `[${suite}] skipped: ${CHROMIUM} is missing. Install it with \`bash scripts/chromium.sh\` (apt-get install chromium, as root); with CI=true this suite fails instead.`,
    );
  }
  return { available, required };
}

/** Headless Chromium for the page tests. @throws Error when it is missing (CI=true). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing and CI=true: run \`bash scripts/chromium.sh\` first`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}
