/** Reading what a worker process of the crash tests and the kill trials wrote: its JSON Lines files and its stdout. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

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

/** A worker process started with tsx: its stdout lines as they come, and how it ended. */
export interface Worker {
  child: ChildProcess;
  lines: string[];
  /** The signal that ended it, or its exit code (a nonzero code also prints its stderr). */
  exited: Promise<NodeJS.Signals | number | null>;
}

/** Starts `node --import tsx <script> <config as JSON>`, collecting its stdout lines. */
export function spawnWorker(script: string, config: unknown): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(config)], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child
    .stdout!.setEncoding('utf8')
    .on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) console.error(`${basename(script)} exited ${code}:\n${stderr}`);
      resolve(signal ?? code);
    }),
  );
  return { child, lines, exited };
}
