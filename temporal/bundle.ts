import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { requireOptionalPeers } from '../run/optional-peers.ts';
import { WORKFLOWS_PATH } from './worker.ts';

/**
 * Bundles the run workflow ahead of time (issue 26 item 7; docs/temporal.md §Worker) and writes it to
 * `path`: a worker started with `createTemporalWorker({ worker: { workflowBundle: { codePath } } })`
 * loads it instead of running webpack over 3 MB of modules at every start (5–9 s on a loaded
 * 2-core machine). Build it with the release you deploy: a bundle and the activities it calls
 * must come from the same toolwarden version.
 *
 * ```sh
 * node -e "import('toolwarden/temporal').then((t) => t.writeWorkflowBundle('dist/toolwarden-workflows.js'))"
 * ```
 *
 * @returns the path written and the bundle's size in bytes
 * @throws MissingPeerError naming the `npm install` line when `@temporalio/worker` or `-workflow` is
 *   not installed
 */
export async function writeWorkflowBundle(path: string): Promise<{ codePath: string; bytes: number }> {
  requireOptionalPeers('toolwarden/temporal writeWorkflowBundle', {
    '@temporalio/worker': '^1.24.0',
    '@temporalio/workflow': '^1.24.0',
  });
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, code);
  return { codePath: path, bytes: Buffer.byteLength(code) };
}

const quiet = () => {};
/** webpack's progress lines are not the caller's business; warnings and errors still throw or print. */
const quietLogger = {
  log: quiet,
  trace: quiet,
  debug: quiet,
  info: quiet,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
