import type { LanguageModelV3 } from '@ai-sdk/provider';
import { modelPlanner } from '../../models/model-planner.ts';
import type { HintStyle } from '../../models/render-hint.ts';
import type { Caps } from '../../run/caps.ts';
import type { Planner, PlanResult } from '../../run/planner.ts';
import type { RunEvent } from '../../run/run-events.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import type { RetryReason } from '../../tools/index.ts';
import type { BfclEntry } from '../bfcl-types.ts';
import type { EntryTool } from '../entry-tools.ts';
import { loadCategory } from '../load-entries.ts';
import { echoOf } from './echo-tool.ts';
import { caseFromEntry, type EvalCase } from './eval-case.ts';
import { callsMismatch, type ExecutedCall } from './match-ground-truth.ts';
import { EvalOptionError, spread } from './run-eval.ts';

/**
 * The BFCL eval with a real model planning (issue 11, docs/eval.md): each entry's question goes
 * to `modelPlanner` over any AI SDK language model; the model picks the tool and writes the
 * arguments, the boundary checks them, a refused call comes back to the model as a hint
 * (`structured`: the RetryHint rendered for a model; `plain`: the error message only, as other
 * frameworks give it), and the model may repair it. Nothing is replayed or injected: the
 * mistakes are the model's own.
 *
 * | metric | per case |
 * |---|---|
 * | `firstCorrect` | the calls of the model's first turn match the ground truth (BFCL's AST rules, `match-ground-truth.ts`) |
 * | `correct` | the first batch the boundary let through matches (after any repairs) |
 * | `hinted` | the boundary refused a call of the run (a RetryHint was given) |
 * | `repaired` | hinted, and a later batch was correct |
 * | `turns`, tokens, `durationMs` | model calls, input and output tokens summed over them, wall time |
 */
export interface ModelEvalOptions {
  dataDir: string;
  categories: readonly string[];
  /** Entries per category, spread evenly; all when undefined. */
  limit?: number;
  /** A model for each case (a fresh wrapper counts its usage). */
  model: () => LanguageModelV3;
  hints: HintStyle;
  /** Cases run at once. A local server answers one request at a time; more only queue there. */
  concurrency: number;
  caps?: Caps;
  temperature?: number;
  maxOutputTokens?: number;
  onStart?: (total: number) => void;
  onRecord?: (record: ModelEvalRecord, done: number) => void;
}

/** The caps of a model-eval run: a few calls, a minute. */
export const MODEL_EVAL_CAPS: Caps = {
  maxToolCalls: 3,
  maxConsecutiveFailedToolCalls: 3,
  maxRetriesPerTool: 2,
  timeBudgetMs: 60_000,
};

/** One case of the model eval, as the JSON report holds it. */
export interface ModelEvalRecord {
  id: string;
  category: string;
  status: string;
  firstCorrect: boolean;
  correct: boolean;
  hinted: boolean;
  repaired: boolean;
  hintReasons: RetryReason[];
  /** Tool calls the model proposed, and of them executed. */
  proposed: number;
  executed: number;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
  mismatch?: string;
  error?: string;
  firstCalls: ExecutedCall[];
}

/** Totals of some records (a category, or all). */
export interface ModelEvalRow {
  category: string;
  cases: number;
  firstCorrect: number;
  correct: number;
  hinted: number;
  repaired: number;
  failed: number;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  p50Ms: number;
  p95Ms: number;
}

export interface ModelEvalReport {
  command: string;
  createdAt: string;
  model: string;
  hints: HintStyle;
  options: { categories: string[]; limit: number | null; concurrency: number; caps: Caps };
  wallMs: number;
  rows: ModelEvalRow[];
  total: ModelEvalRow;
  skipped: { id: string; reason: string }[];
  records: ModelEvalRecord[];
}

/**
 * Runs the model eval.
 *
 * @throws EvalOptionError for a category whose data is missing or an unusable option.
 */
export async function runModelEval(
  options: ModelEvalOptions & { modelName: string },
): Promise<ModelEvalReport> {
  const started = performance.now();
  if (!(options.concurrency >= 1)) throw new EvalOptionError('--concurrency must be at least 1');
  const caps = options.caps ?? MODEL_EVAL_CAPS;
  const toolCache = new Map<string, EntryTool>();
  const entries: BfclEntry[] = [];
  for (const category of options.categories) {
    const loaded = await loadCategory(options.dataDir, category);
    const missing = loaded.problems.find((p) => p.kind === 'missing_file' || p.kind === 'unreadable_file');
    if (missing) throw new EvalOptionError(`${missing.message} (data folder ${options.dataDir})`);
    entries.push(...spread(loaded.entries, options.limit));
  }
  const skipped: ModelEvalReport['skipped'] = [];
  const cases = entries.flatMap((entry) => {
    try {
      // `none`: the entry as it is, no injected mistake, plain echo tools.
      return [
        caseFromEntry(entry, {
          seed: 0,
          kinds: ['none'],
          toolTimeoutMs: 5_000,
          faultTimeoutMs: 0,
          retryAfterMs: 0,
          toolCache,
        }),
      ];
    } catch (err) {
      skipped.push({ id: entry.id, reason: (err as Error).message });
      return [];
    }
  });
  options.onStart?.(cases.length);
  const records: ModelEvalRecord[] = new Array(cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      records[index] = await runModelCase(cases[index]!, options, caps);
      options.onRecord?.(records[index]!, ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, cases.length) }, worker));
  const categories = [...new Set(records.map((record) => record.category))];
  return {
    command: 'toolwarden eval bfcl --model',
    createdAt: new Date().toISOString(),
    model: options.modelName,
    hints: options.hints,
    options: {
      categories: [...options.categories],
      limit: options.limit ?? null,
      concurrency: options.concurrency,
      caps,
    },
    wallMs: Math.round(performance.now() - started),
    rows: categories.map((category) =>
      modelEvalRow(
        category,
        records.filter((record) => record.category === category),
      ),
    ),
    total: modelEvalRow('total', records),
    skipped,
    records,
  };
}

/** One case: a runtime with the case's tools and the model planner; the run's events tell the rest. */
export async function runModelCase(
  evalCase: EvalCase,
  options: ModelEvalOptions,
  caps: Caps,
): Promise<ModelEvalRecord> {
  const usage = { turns: 0, inputTokens: 0, outputTokens: 0 };
  const model = counted(options.model(), usage);
  let first: PlanResult | undefined;
  let proposed = 0;
  const planner = firstPlanKept(
    modelPlanner({
      model,
      hints: options.hints,
      temperature: options.temperature ?? 0,
      maxOutputTokens: options.maxOutputTokens ?? 256,
      maxRetries: 1,
      system:
        'You are a function-calling assistant. Call the functions the user needs, with the arguments their request gives. When a call fails, read why and fix it. When you are done, answer in one sentence.',
    }),
    (plan) => {
      first ??= plan;
      proposed += plan.toolCalls?.length ?? 0;
    },
  );
  const runtime = createRuntime({
    agent: { id: 'bfcl-model-eval' },
    planner,
    tools: evalCase.tools,
    caps,
    telemetry: false,
  });
  const started = performance.now();
  const run = runtime.start({ runId: evalCase.id, messages: evalCase.messages });
  const hintReasons: RetryReason[] = [];
  const batches: ExecutedCall[][] = [];
  let executedCount = 0;
  const byTurn = new Map<string, ExecutedCall[]>();
  const onEvent = (event: RunEvent) => {
    if (event.type === 'retry_hint') hintReasons.push(event.hint.reason);
    else if (event.type === 'tool_result') {
      const echo = event.result.executed && !event.result.error ? echoOf(event.result.result) : undefined;
      if (!echo) return;
      executedCount += 1;
      const turn = event.result.toolCallId.slice(0, event.result.toolCallId.lastIndexOf(':'));
      let calls = byTurn.get(turn);
      if (!calls) {
        calls = [];
        byTurn.set(turn, calls);
        batches.push(calls);
      }
      calls.push({ tool: echo.tool, input: echo.arguments });
    }
  };
  const subscription = run.events$.subscribe(onEvent);
  let status = 'failed';
  let error: string | undefined;
  try {
    const outcome = await run.result();
    status = outcome.status;
    error = outcome.error?.message;
  } catch (err) {
    error = (err as Error).message;
  } finally {
    subscription.unsubscribe();
    await runtime.close();
  }
  const firstCalls: ExecutedCall[] = ((first as PlanResult | undefined)?.toolCalls ?? []).map((call) => ({
    tool: call.name,
    input: inputObject(call.input),
  }));
  const firstMismatch = callsMismatch(firstCalls, evalCase.expected);
  const accepted = batches[0] ?? [];
  const mismatch = callsMismatch(accepted, evalCase.expected);
  const hinted = hintReasons.length > 0;
  return {
    id: evalCase.id,
    category: evalCase.category,
    status,
    firstCorrect: firstMismatch === undefined,
    correct: mismatch === undefined,
    hinted,
    repaired: hinted && mismatch === undefined,
    hintReasons,
    proposed,
    executed: executedCount,
    turns: usage.turns,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    durationMs: Math.round(performance.now() - started),
    ...(mismatch === undefined ? {} : { mismatch }),
    ...(error === undefined ? {} : { error }),
    firstCalls,
  };
}

/** Totals and latency percentiles of `records`. */
export function modelEvalRow(category: string, records: readonly ModelEvalRecord[]): ModelEvalRow {
  const count = (pick: (record: ModelEvalRecord) => boolean) => records.filter(pick).length;
  const sum = (pick: (record: ModelEvalRecord) => number) =>
    records.reduce((total, record) => total + pick(record), 0);
  const times = records.map((record) => record.durationMs).sort((a, b) => a - b);
  const at = (q: number) =>
    times.length === 0 ? 0 : times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return {
    category,
    cases: records.length,
    firstCorrect: count((record) => record.firstCorrect),
    correct: count((record) => record.correct),
    hinted: count((record) => record.hinted),
    repaired: count((record) => record.repaired),
    failed: count((record) => record.status !== 'completed'),
    turns: sum((record) => record.turns),
    inputTokens: sum((record) => record.inputTokens),
    outputTokens: sum((record) => record.outputTokens),
    p50Ms: at(0.5),
    p95Ms: at(0.95),
  };
}

/** The rows as a table: accuracy at the first call and after repair, repair rate, turns, tokens, latency. */
export function formatModelEvalTable(rows: readonly ModelEvalRow[]): string {
  const pct = (part: number, whole: number) => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)}%`);
  const header = [
    'category',
    'cases',
    'first call',
    'after repair',
    'hinted',
    'repaired',
    'failed runs',
    'turns/case',
    'tokens in/out per case',
    'p50 s',
    'p95 s',
  ];
  const lines = rows.map((row) => [
    row.category,
    String(row.cases),
    pct(row.firstCorrect, row.cases),
    pct(row.correct, row.cases),
    String(row.hinted),
    row.hinted === 0 ? '—' : `${row.repaired}/${row.hinted}`,
    String(row.failed),
    row.cases === 0 ? '—' : (row.turns / row.cases).toFixed(2),
    row.cases === 0
      ? '—'
      : `${Math.round(row.inputTokens / row.cases)}/${Math.round(row.outputTokens / row.cases)}`,
    (row.p50Ms / 1000).toFixed(1),
    (row.p95Ms / 1000).toFixed(1),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [format(header), ...lines.map(format)].join('\n');
}

/** The model with its calls and token usage counted into `usage`. */
function counted(
  model: LanguageModelV3,
  usage: { turns: number; inputTokens: number; outputTokens: number },
): LanguageModelV3 {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: async (call) => {
      usage.turns += 1;
      const result = await model.doGenerate(call);
      usage.inputTokens += result.usage.inputTokens.total ?? 0;
      usage.outputTokens += result.usage.outputTokens.total ?? 0;
      return result;
    },
    doStream: (call) => model.doStream(call),
  };
}

/** `planner`, telling `keep` each plan it makes (the eval keeps the first). */
function firstPlanKept(planner: Planner, keep: (plan: PlanResult) => void): Planner {
  return {
    planStart: async (input) => {
      const plan = await planner.planStart(input);
      keep(plan);
      return plan;
    },
    planResume: async (input) => {
      const plan = await planner.planResume(input);
      keep(plan);
      return plan;
    },
  };
}

/** A proposed call's input as an object: models send JSON text; anything unreadable is `{}`. */
function inputObject(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
