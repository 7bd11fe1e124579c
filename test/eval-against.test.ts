import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EvalAgainstError, evalAgainstCommand } from '../cli/eval-against.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { counterTool, ledgerPlanner } from './support/ledger-runs.ts';

const dir = mkdtempSync(join(tmpdir(), 'tw-against-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two finished runs of the 20-step ledger in a SQLite file, as an app leaves them. */
async function storedRuns(path: string) {
  const { tool } = counterTool();
  const runtime = createRuntime({
    agent: { id: 'ledger' },
    planner: ledgerPlanner(),
    tools: [tool],
    telemetry: false,
    policies: [],
    caps: { maxToolCalls: 100 },
    store: sqliteStore({ path }),
  });
  for (const runId of ['r1', 'r2'])
    await runtime.start({ runId, messages: [{ role: 'user', content: `add 1..20 (${runId})` }] }).result();
  await runtime.close();
}

describe('npm run eval -- --against <store> (issue 38 item 4)', () => {
  it('replays a SQLite store’s runs with the config’s policy set, prints what changed and fails the check', async () => {
    const path = join(dir, 'runs.db');
    await storedRuns(path);
    const out: string[] = [];
    const stdout = { write: (text: string) => out.push(text) } as never;
    const json = join(dir, 'report.json');
    const config = join(import.meta.dirname, 'support/ledger-replay.config.ts');
    const { exitCode, report } = await evalAgainstCommand(
      { against: `sqlite:${path}`, config, json },
      { stdout },
    );
    expect(exitCode).toBe(1);
    expect(report).toMatchObject({ changed: 2, same: 0 });
    expect(out.join('')).toContain('2 runs replayed: 0 the same, 2 changed.');
    expect(out.join('')).toContain('r1 and r1~replay part at step 5');
    const { executions } = await import('./support/ledger-replay.config.ts');
    // Every call the replays made was in the record: none executed.
    expect(executions).toEqual([]);
    const written = JSON.parse(readFileSync(json, 'utf8'));
    expect(written.runs[0]).toMatchObject({
      runId: expect.any(String),
      same: false,
      firstDifference: { step: 5 },
    });
  });

  it('refuses a store file that does not exist rather than replay nothing', async () => {
    await expect(evalAgainstCommand({ against: join(dir, 'missing.db') })).rejects.toBeInstanceOf(
      EvalAgainstError,
    );
  });
});
