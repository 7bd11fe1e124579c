import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoSharedDataDir } from './data-dir.ts';

/**
 * For test suites that read the real BFCL files in `<repo root>/../shared/data/bfcl`: the folder,
 * or undefined after a `console.warn` naming the suite and the reason, so the suite can
 * `describe.skipIf(!dir)`. With `CI=true` a missing folder throws instead: CI must test on real
 * data, never skip it quietly.
 */
export function sharedBfclDataDir(
  suite: string,
  dir: string | undefined = repoSharedDataDir(),
): string | undefined {
  // `npm run test:unit` (vitest.unit.config.ts) leaves the real data to the full suite: reading it is slow.
  if (process.env.TOOLWARDEN_TEST_PEERS === 'off') {
    console.warn(
      `Skipping ${suite}: the real BFCL data is read by the full suite (npm test), not npm run test:unit`,
    );
    return undefined;
  }
  if (dir && existsSync(join(dir, 'BFCL_v4_simple_python.json'))) return dir;
  const reason = `the BFCL data folder ${dir ?? '<repo root>/../shared/data/bfcl'} is missing`;
  if (process.env.CI === 'true') throw new Error(`${suite}: ${reason}, and CI=true requires it`);
  console.warn(`Skipping ${suite}: ${reason} (with CI=true this fails instead)`);
  return undefined;
}
