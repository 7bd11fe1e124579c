/** Reading what a worker process of the crash tests and the kill trials wrote: its JSON Lines files and its stdout. */
import { existsSync, readFileSync } from 'node:fs';

/** The JSON values of a JSON Lines file, one per non-empty line; `[]` when the file is not there. */
export const readJsonLines = <T>(path: string): T[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as T)
    : [];

/**
 * The first line of a worker's stdout (collected into `lines`) matching `pattern`, polled.
 * @throws when the worker exits first (naming what it printed), or after `timeoutMs`.
 */
export async function waitForLine(
  lines: string[],
  pattern: RegExp,
  exited: Promise<unknown>,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void exited.then(() => {
    done = true;
  });
  while (Date.now() < deadline) {
    const line = lines.find((candidate) => pattern.test(candidate));
    if (line !== undefined) return line;
    if (done) throw new Error(`worker exited before printing ${pattern}: ${lines.join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${pattern}`);
}
