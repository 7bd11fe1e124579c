/**
 * The variants bench/profile.ts and bench/alloc-profile.ts run: one run of the reference loop
 * (10 steps) per call, made by the loops the side-by-side measures (toolwarden-loops.ts, chart-floor.ts).
 *
 * @module
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { discardingStore } from './reference-loop.ts';
import { actorLoop, machineLoop } from './toolwarden-loops.ts';

/** The names `profileLoop` takes, as the profilers' usage lines give them. */
export const PROFILE_VARIANTS = ['default', 'bare', 'machine', 'sqlite', 'floor'] as const;

/**
 * One run per call of `name`: `default` (createRuntime defaults: memory store, telemetry plugin),
 * `bare` (no store, no telemetry), `machine` (the run machine alone), `sqlite` (the default
 * runtime on a SQLite file in a temporary directory), `floor` (the chart's floor).
 *
 * @throws Error for any other name.
 */
export async function profileLoop(name: string): Promise<() => Promise<void>> {
  switch (name) {
    case 'floor':
      return (await import('./chart-floor.ts')).chartFloorLoop();
    case 'machine':
      return machineLoop();
    case 'bare':
      return actorLoop({ store: discardingStore(), telemetry: false });
    case 'default':
      return actorLoop({});
    case 'sqlite':
      return actorLoop({
        store: sqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'tw-profile-')), 'runs.db') }),
      });
    default:
      throw new Error(`unknown variant ${name}: one of ${PROFILE_VARIANTS.join(', ')}`);
  }
}
