import { existsSync, writeFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RunStore } from '../stores/run-store.ts';
import { type ReplayOptions, type ReplayReport, replayRuns } from '../testing/replay-runs.ts';

/** The options of `toolwarden eval --against <store>` (`npm run eval -- --against <store>`). */
export interface EvalAgainstOptions {
  /** The stored runs: a SQLite file (`runs.db`, `sqlite:runs.db`) or a PostgreSQL URL (`postgres://…`). */
  against: string;
  /** A module whose default export is `{ tools, planner?, policies? }`: what the runs are replayed with (required). */
  config?: string;
  /** Run ids, comma-separated. Default: every completed or failed run of the store. */
  runs?: string;
  /** Write the report (every run's comparison) here as JSON. */
  json?: string;
}

/** Thrown for an option that cannot work (no such store file, a config without tools). */
export class EvalAgainstError extends Error {
  override readonly name = 'EvalAgainstError';
}

/**
 * `toolwarden eval --against <store> --config replay.config.ts` (issue 38 item 4): replays the
 * store's finished runs with the config's planner and policy set (testing/replay-runs.ts: calls
 * identical to the record are answered from it, not executed) and prints what changed, run by
 * run (`compareRuns`' summary). Exit code 1 when a run changed: a regression check for CI.
 *
 * @throws EvalAgainstError for a missing store file or a bad config; the store's errors.
 */
export async function evalAgainstCommand(
  options: EvalAgainstOptions,
  io: { stdout: NodeJS.WritableStream } = process,
): Promise<{ exitCode: number; report: ReplayReport }> {
  // The tools are part of what each planner turn was shown: a replay without them differs at once.
  if (!options.config)
    throw new EvalAgainstError(
      '--against needs --config <module>: default export { tools, planner?, policies? }',
    );
  const replay = await loadReplayConfig(options.config);
  const store = await openStore(options.against);
  try {
    const runIds = options.runs
      ?.split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    const report = await replayRuns(store, { ...replay, ...(runIds ? { runIds } : {}) });
    io.stdout.write(`${report.summary}\n`);
    if (options.json) {
      const runs = report.runs.map(({ comparison, ...run }) => ({
        ...run,
        same: comparison.same,
        firstDifference: comparison.firstDifference,
        summary: comparison.summary,
        steps: comparison.steps.map(({ step, same, fields, changedCalls }) => ({
          step,
          same,
          fields,
          changedCalls,
        })),
        totals: comparison.totals,
      }));
      writeFileSync(options.json, `${JSON.stringify({ ...report, runs }, null, 2)}\n`);
    }
    return { exitCode: report.changed > 0 ? 1 : 0, report };
  } finally {
    await store.close();
  }
}

async function openStore(spec: string): Promise<RunStore> {
  if (/^postgres(ql)?:\/\//.test(spec)) {
    const { postgresStore } = await import('../stores/postgres-store.ts');
    return postgresStore({ connectionString: spec });
  }
  const path = spec.replace(/^sqlite:/, '');
  // A store is never made here: a mistyped path would replay nothing and say all is well.
  if (!existsSync(path)) throw new EvalAgainstError(`--against ${spec}: no such SQLite file`);
  const { sqliteStore } = await import('../stores/sqlite-store.ts');
  return sqliteStore({ path });
}

/** Imports a replay config: default export `{ tools, planner?, policies? }`. */
async function loadReplayConfig(file: string): Promise<ReplayOptions> {
  const path = isAbsolute(file) ? file : resolve(process.cwd(), file);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    throw new EvalAgainstError(`Cannot load the replay config ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const config = loaded.default as Partial<ReplayOptions> | undefined;
  if (!config || typeof config !== 'object' || !Array.isArray(config.tools))
    throw new EvalAgainstError(
      `The replay config ${path} must export default { tools: Tool[], planner?, policies? } (tools run the calls that differ from the record)`,
    );
  return config as ReplayOptions;
}
