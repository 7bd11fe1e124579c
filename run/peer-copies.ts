/**
 * Two copies of a shared peer (issue 28 item 1): toolwarden and the app must use one `zod` (two
 * break `instanceof` and schema identity) and one `@opentelemetry/api` (two keep separate context
 * managers and tracers). A link to a checkout (`npm install ../toolwarden`) resolves them from the
 * checkout, silently; {@link warnOnPeerCopies} says so once per process, naming both paths.
 *
 * @module
 */

import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The peers toolwarden shares with the app. */
export const SHARED_PEERS = ['zod', '@opentelemetry/api'] as const;

/** A peer toolwarden and the app resolve to different installed copies of. */
export interface PeerCopies {
  name: string;
  /** The package folder toolwarden imports. */
  toolwarden: string;
  /** The package folder the app (resolving from `cwd`) imports. */
  app: string;
}

/** The folder of the installed package `name` that `file` belongs to, as a real path. */
function packageRoot(file: string, name: string): string {
  const suffix = join('node_modules', name);
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    if (dir.endsWith(suffix)) return realpathSync(dir);
  }
  return realpathSync(dirname(file));
}

/**
 * The shared peers toolwarden and the app at `cwd` resolve to different copies of. A peer either
 * side cannot resolve is left out (nothing to compare).
 */
export function peerCopies(
  cwd: string = process.cwd(),
  fromToolwarden: (name: string) => string = (name) => fileURLToPath(import.meta.resolve(name)),
): PeerCopies[] {
  const fromApp = createRequire(join(cwd, 'package.json'));
  const found: PeerCopies[] = [];
  for (const name of SHARED_PEERS) {
    let ours: string;
    let theirs: string;
    try {
      ours = packageRoot(fromToolwarden(name), name);
      theirs = packageRoot(fromApp.resolve(name), name);
    } catch {
      continue;
    }
    if (ours !== theirs) found.push({ name, toolwarden: ours, app: theirs });
  }
  return found;
}

/** The app folders already checked: each is checked, and warned about, once per process. */
const checked = new Set<string>();

/**
 * Warns once per process (through `warn`, default `console.warn`) when toolwarden and the app use
 * two copies of zod or of the OTel API, naming both folders and the fix. Called by `createRuntime`.
 */
export function warnOnPeerCopies(
  warn: (message: string) => void = console.warn,
  cwd: string = process.cwd(),
): void {
  if (checked.has(cwd)) return;
  checked.add(cwd);
  for (const copies of peerCopies(cwd)) {
    warn(
      `[toolwarden] two copies of ${copies.name}: toolwarden uses ${copies.toolwarden}, the app ${copies.app}. ` +
        'Install toolwarden as a packed copy (README, Install) so both share the app’s; a linked checkout brings its own.',
    );
  }
}
