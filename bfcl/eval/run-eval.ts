import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { BfclEntry } from '../bfcl-types.ts';
import type { EntryTool } from '../entry-tools.ts';
import { BFCL_CATEGORIES, loadCategory } from '../load-entries.ts';
import type { MistakeKind } from '../mistake-model.ts';
import { caseFromEntry } from './eval-case.ts';
import { type EvalSummary, evalSummary } from './eval-summary.ts';
import { type GroundTruthAcceptance, groundTruthAcceptance } from './ground-truth-acceptance.ts';
import {
  DEFAULT_EVAL_SETTINGS,
  type EvalRecord,
  type EvalSettings,
  evalPolicies,
  runCase,
} from './run-case.ts';

/**
 * `toolwarden eval bfcl`: every selected BFCL entry becomes one run through the runtime
 * (`caseFromEntry`, `runCase`), a few at a time, and the records add up to a report: the table
 * per category and mistake kind, whether the boundary accepts the ground truth as it is, and
 * every run's record.
 *
 * Entries are chosen per category, `limit` of them spread evenly over the file (every
 * `length / limit`-th), so a small eval still sees the whole category. The same options give the
 * same runs: mistakes are seeded by `seed` and the entry id.
 */
export const EVAL_CATEGORIES = [
  'simple_python',
  'simple_java',
  'simple_javascript',
  'multiple',
  'parallel',
  'parallel_multiple',
  'live_simple',
  'live_multiple',
  'live_parallel',
  'live_parallel_multiple',
  'multi_turn_miss_param',
] as const;

/** What `npm start` runs: 100 entries each of two live categories, well under a minute. */
export const EVAL_DEFAULTS = {
  categories: ['live_simple', 'live_multiple'] as string[],
  limit: 100 as number | undefined,
  seed: 1 as number | string,
  concurrency: 8,
};

export interface EvalOptions {
  /** The BFCL data folder (`resolveDataDir`). */
  dataDir: string;
  categories: readonly string[];
  /** Entries per category; undefined: all. */
  limit?: number;
  seed: number | string;
  /** Runs at a time. */
  concurrency: number;
  /** Mistake kinds to draw from; default all. */
  kinds?: readonly MistakeKind[];
  settings?: EvalSettings;
  /** Called once the runs are known, with their number. */
  onStart?: (total: number) => void;
  /** Called as each run ends. */
  onRecord?: (record: EvalRecord, done: number) => void;
}

export interface EvalReport {
  command: string;
  createdAt: string;
  options: { categories: string[]; limit: number | null; seed: number | string; concurrency: number };
  data: { dir: string; files: string[] };
  /** BFCL functions are not callable services: the eval's tools validate and echo their input. */
  tools: string;
  settings: EvalSettings;
  policies: string[];
  wallMs: number;
  groundTruth: GroundTruthAcceptance;
  summary: EvalSummary;
  /** Entries that could not become a run, with why. */
  skipped: { id: string; reason: string }[];
  /** Problems met loading the data (a missing file fails the eval instead). */
  loadProblems: string[];
  /** Entries loaded and entries the data files held that could not be loaded, over all categories. */
  load: { entries: number; dropped: number };
  records: EvalRecord[];
}

/** An option the eval cannot run with; the message says what it accepts. */
export class EvalOptionError extends Error {
  override readonly name = 'EvalOptionError';
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const started = performance.now();
  const settings = options.settings ?? DEFAULT_EVAL_SETTINGS;
  for (const category of options.categories) checkCategory(category);
  if (!(options.concurrency >= 1)) throw new EvalOptionError('--concurrency must be at least 1');

  const toolCache = new Map<string, EntryTool>();
  const entries: BfclEntry[] = [];
  const files: string[] = [];
  const loadProblems: string[] = [];
  const load = { entries: 0, dropped: 0 };
  for (const category of options.categories) {
    const loaded = await loadCategory(options.dataDir, category);
    const missing = loaded.problems.find((p) => p.kind === 'missing_file' || p.kind === 'unreadable_file');
    if (missing) throw new EvalOptionError(`${missing.message} (data folder ${options.dataDir})`);
    files.push(...loaded.files);
    loadProblems.push(...loaded.problems.map((p) => p.message));
    load.entries += loaded.entries.length;
    load.dropped += loaded.dropped;
    entries.push(...spread(loaded.entries, options.limit));
  }

  const skipped: EvalReport['skipped'] = [];
  const cases = entries.flatMap((entry) => {
    try {
      return [
        caseFromEntry(entry, {
          seed: options.seed,
          kinds: options.kinds,
          toolTimeoutMs: settings.toolTimeoutMs,
          faultTimeoutMs: settings.faultTimeoutMs,
          retryAfterMs: settings.retryAfterMs,
          toolCache,
        }),
      ];
    } catch (err) {
      skipped.push({ id: entry.id, reason: (err as Error).message });
      return [];
    }
  });
  options.onStart?.(cases.length);

  const records: EvalRecord[] = new Array(cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      records[index] = await runCase(cases[index]!, settings);
      options.onRecord?.(records[index]!, ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, cases.length) }, worker));

  return {
    command: 'toolwarden eval bfcl',
    createdAt: new Date().toISOString(),
    options: {
      categories: [...options.categories],
      limit: options.limit ?? null,
      seed: options.seed,
      concurrency: options.concurrency,
    },
    data: { dir: options.dataDir, files: [...new Set(files)] },
    tools:
      'BFCL functions are not callable services: each tool is the mapped function doc, and its executor returns the input the boundary validated (an echo), which the eval checks against the ground truth.',
    settings,
    policies: evalPolicies(settings).map((policy) => policy.name),
    wallMs: Math.round(performance.now() - started),
    groundTruth: groundTruthAcceptance(entries, toolCache),
    summary: evalSummary(records),
    skipped,
    loadProblems,
    load,
    records,
  };
}

/** `.toolwarden/reports/bfcl-<time>.json` under `cwd`. */
export function defaultReportPath(cwd: string = process.cwd(), now: Date = new Date()): string {
  return join(resolve(cwd), '.toolwarden', 'reports', `bfcl-${now.toISOString().replace(/[:.]/g, '-')}.json`);
}

export async function writeReport(report: EvalReport, path: string): Promise<string> {
  const absolute = resolve(path);
  await mkdir(dirname(absolute), { recursive: true });
  await writeFile(absolute, `${JSON.stringify(report, null, 2)}\n`, 'utf8');
  return absolute;
}

function checkCategory(category: string): void {
  if ((EVAL_CATEGORIES as readonly string[]).includes(category)) return;
  const known = (BFCL_CATEGORIES as readonly string[]).includes(category);
  throw new EvalOptionError(
    `${known ? `The eval cannot run BFCL category "${category}" yet` : `"${category}" is no BFCL category`}. ` +
      `It runs: ${EVAL_CATEGORIES.join(', ')}.`,
  );
}

/** `limit` entries spread evenly over `entries` (all of them when `limit` is undefined or larger). */
export function spread<T>(entries: readonly T[], limit: number | undefined): T[] {
  if (limit === undefined || limit >= entries.length) return [...entries];
  return Array.from({ length: limit }, (_, i) => entries[Math.floor((i * entries.length) / limit)]!);
}
