import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { sharedBfclDataDir } from '../bfcl/shared-data-suite.ts';

/**
 * `toolwarden eval bfcl` as a user runs it: the real bin in a child process. The eval needs the
 * BFCL data (skipped with a warning without it; CI=true fails instead); `--help` and the error
 * for a data folder that is not there do not.
 */
const SUITE = 'toolwarden eval bfcl CLI (test/bfcl-eval-cli.test.ts)';
const bin = resolve(import.meta.dirname, '..', 'bin', 'toolwarden.js');
const run = promisify(execFile);
const toolwarden = (args: string[]) =>
  run(process.execPath, [bin, ...args], { env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });

describe('toolwarden command line', () => {
  it('--help lists every command', async () => {
    const { stdout } = await toolwarden(['--help']);
    for (const command of ['eval', 'diagram', 'inspect', 'demo']) expect(stdout).toContain(command);
    const help = await toolwarden(['eval', 'bfcl', '--help']);
    expect(help.stdout).toContain('--category');
    expect(help.stdout).toContain('not callable services');
  });

  it('eval bfcl --data with a folder that is not there: exit code 1 and the data error', async () => {
    const failed = await toolwarden(['eval', 'bfcl', '--data', '/nonexistent/bfcl']).catch((err) => err);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('--data names /nonexistent/bfcl, which is not a folder');
  });
});

const dataDir = sharedBfclDataDir(SUITE);

describe.skipIf(!dataDir)(SUITE, () => {
  it('eval bfcl --limit 5 --json FILE: exit code 0, the table, and a report that parses', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'toolwarden-eval-')), 'report.json');
    const { stdout } = await toolwarden(['eval', 'bfcl', '--limit', '5', '--json', file]);

    // What plans the runs is said before the numbers (issue 28 item 8).
    expect(stdout.split('\n')[0]).toContain('planner: no model');
    expect(stdout).toContain('toolwarden eval bfcl --model');
    expect(stdout).toMatch(/category\s+mistake\s+runs\s+completed\s+1st retry\s+clarified\s+capped\s+failed/);
    expect(stdout).toMatch(/^live_simple\s+all\s+5\s/m);
    expect(stdout).toMatch(/^live_multiple\s+all\s+5\s/m);
    expect(stdout).toContain('0 left running or awaiting');
    expect(stdout).toContain(`report: `);
    const report = JSON.parse(readFileSync(file, 'utf8'));
    expect(report.records).toHaveLength(10);
    expect(report.summary.total).toMatchObject({ runs: 10, unfinished: 0 });
    expect(report.options).toMatchObject({
      categories: ['live_simple', 'live_multiple'],
      limit: 5,
      seed: '1',
    });
  });
});
