import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A fresh clone's `npm install` leaves package-lock.json as committed (issue 28 item 8): npm
 * resolves package.json against the lockfile (`--package-lock-only`, so nothing is installed) in a
 * copy of the two files, and the lockfile it writes must be byte for byte the committed one. A
 * lockfile written by another npm, or edited by hand (unsorted optional platform packages, missing
 * integrity), fails here: run `npm install --package-lock-only` and commit the result.
 */
const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'toolwarden-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('package-lock.json', () => {
  it('is what npm install writes for package.json: a fresh install does not rewrite it', async () => {
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(root, file), join(dir, file));
    await promisify(execFile)(
      'npm',
      ['install', '--package-lock-only', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: dir, timeout: 180_000 },
    );
    const committed = readFileSync(join(root, 'package-lock.json'), 'utf8');
    expect(readFileSync(join(dir, 'package-lock.json'), 'utf8') === committed).toBe(true);
  }, 200_000);
});
