/**
 * A worker process for test/batch-rows.test.ts's SIGKILL case (issue 36 item 5):
 *
 *     node --import tsx test/support/batch-kill-child.ts '{"store":"sqlite","db":"...","calls":2000,"readyAfter":600,"log":"..."}'
 *
 * Starts one run whose planner answers `calls` lookups (run up to 32 at once, each done after a
 * seeded random 0–3 ms, 5–25 ms once READY is printed, so results land out of order) on a SQLite
 * file or a PostgreSQL schema.
 * Each call, as it finishes, appends its number to `log` (synchronously, before its result is
 * handed back, so a result the store holds is always in the log). At the `readyAfter`th call it
 * prints `READY` and goes on: the test kills it with SIGKILL there, in the middle of the batch's
 * saves.
 *
 * @module
 */

import { appendFileSync, writeSync } from 'node:fs';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { postgresStore } from '../../stores/postgres-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { type ChildStore, lookupTool } from './batch-rows.ts';

export interface BatchKillChildConfig extends ChildStore {
  calls: number;
  readyAfter: number;
  /** Where each finished call's number is appended, a line each. */
  log: string;
  owner: string;
  leaseMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as BatchKillChildConfig;
let state = 36;
const random = () => {
  state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
  return state / 2_147_483_648;
};
let finished = 0;

const lookup = lookupTool(async (n) => {
  // Past READY calls take longer, so the batch is still running when the kill comes on a loaded machine.
  const ms = finished < config.readyAfter ? random() * 4 : 5 + random() * 20;
  await new Promise((resolve) => setTimeout(resolve, Math.floor(ms)));
  appendFileSync(config.log, `${n}\n`);
  if (++finished === config.readyAfter) writeSync(1, 'READY\n');
});

const runtime = createRuntime({
  agent: { id: 'batch-rows' },
  planner: {
    planStart: async () => ({
      toolCalls: Array.from({ length: config.calls }, (_, n) => ({ name: 'crm.lookup', input: { n } })),
    }),
    planResume: async () => ({ finalResponse: { text: 'Looked every customer up.' } }),
  },
  tools: [lookup],
  store:
    config.store === 'sqlite'
      ? sqliteStore({ path: config.db! })
      : postgresStore({ connectionString: config.url!, schema: config.schema! }),
  telemetry: false,
  caps: { maxToolCalls: config.calls, maxCallsPerBatch: config.calls },
  durable: { owner: config.owner, leaseMs: config.leaseMs },
});
runtime.start({ runId: 'run-killed', messages: [{ role: 'user', content: 'Look them all up' }] });
