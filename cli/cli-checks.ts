/**
 * Checks the command line makes before it starts work, so a mistake fails at once with one
 * message rather than after a long run (issue 28 item 7).
 *
 * @module
 */

import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from 'commander';

/** Thrown for a command-line value that cannot work; `main` prints its message once, exit code 1. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

/** Parses a TCP port option: an integer 0..65535 (0: any free port). */
export function portOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new InvalidArgumentError(`"${value}" is not a port (an integer from 0 to 65535; 0: any free port)`);
  return n;
}

/**
 * `--json FILE`: its folder must exist. A typo in the path would otherwise create folders
 * silently and leave the report where nobody looks.
 *
 * @throws CliUsageError naming the missing folder.
 */
export function checkReportFolder(file: string | undefined, option = '--json'): void {
  if (file === undefined) return;
  const folder = dirname(resolve(file));
  if (existsSync(folder) && statSync(folder).isDirectory()) return;
  throw new CliUsageError(`${option} ${file}: the folder ${folder} does not exist (create it first)`);
}

/**
 * `eval bfcl --model URL`: something must listen at the URL before hundreds of cases are run
 * against it (a 0% table from a server that is not there reads like a result). The probe is a TCP
 * connection, not a request: a model server that is busy answering another request (llama.cpp's
 * server serves one at a time, minutes under load) still accepts connections, and is not absent.
 *
 * @param timeoutMs how long the connection may take to open (ms).
 * @throws CliUsageError naming the URL and the network error (ECONNREFUSED, ENOTFOUND, timeout).
 */
export async function checkModelServer(baseURL: URL, timeoutMs = 5_000): Promise<void> {
  const port = Number(baseURL.port || (baseURL.protocol === 'https:' ? 443 : 80));
  const host = baseURL.hostname.replace(/^\[(.*)\]$/, '$1');
  try {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host, port, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('timeout', () => {
        socket.destroy();
        reject(Object.assign(new Error(`no connection within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      });
      socket.once('error', reject);
    });
  } catch (error) {
    const reason =
      (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
    throw new CliUsageError(
      `--model ${baseURL.href}: no model server answers there (${reason}). ` +
        'Start an OpenAI-compatible server first (in this repository: bash scripts/llm.sh start), or fix the URL.',
      { cause: error },
    );
  }
}

/** This package's version, from the package.json above this module (source or dist/). */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'toolwarden' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
