import { callFingerprint } from '../policies/call-fingerprint.ts';
import { type CallRecord, type RunLike, type RunRecord, runRecord, type StepRecord } from './run-record.ts';

/** What `compareRuns` labels, per step. */
export type StepField =
  | 'toolCalls'
  | 'inputs'
  | 'results'
  | 'policyDecisions'
  | 'hints'
  | 'awaits'
  | 'finalAnswer'
  | 'tokens'
  | 'cost'
  | 'durationMs';

/** `same`, or `changed`. */
export type Label = 'same' | 'changed';

/** One call that differs between the runs at a step: by its index in the batch. */
export interface ChangedCall {
  index: number;
  a?: CallRecord;
  b?: CallRecord;
}

/** One step (planner turn number) of the two runs, field by field. */
export interface StepComparison {
  step: number;
  same: boolean;
  fields: Record<StepField, Label>;
  /** The calls whose tool, input or result differ. */
  changedCalls: ChangedCall[];
  a?: StepRecord;
  b?: StepRecord;
}

/** What `compareRuns` returns. */
export interface RunComparison {
  same: boolean;
  /** The first step that differs and what differs in it; absent when the runs are the same. */
  firstDifference?: { step: number; fields: StepField[] };
  steps: StepComparison[];
  /** The runs as a whole: status, final answer, tokens, cost, duration. */
  totals: Record<'status' | 'finalAnswer' | 'tokens' | 'cost' | 'durationMs', Label>;
  /** Fields not compared for want of data (no event log given, no pricing). */
  notCompared: StepField[];
  /** One paragraph for a person: where the runs part and what changed. */
  summary: string;
  a: RunRecord;
  b: RunRecord;
}

/** What `compareRuns` takes besides the runs. */
export interface CompareOptions {
  /** Prices per million tokens, to compare cost (USD or any currency). Without: cost is not compared. */
  pricing?: { inputPerMillion: number; outputPerMillion: number };
  /**
   * Durations are `same` while they differ by at most this many ms or this fraction of the longer
   * (wall time is never equal twice). Default `{ ms: 100, ratio: 0.5 }`.
   */
  durationTolerance?: { ms: number; ratio: number };
}

const FIELDS: StepField[] = [
  'toolCalls',
  'inputs',
  'results',
  'policyDecisions',
  'hints',
  'awaits',
  'finalAnswer',
  'tokens',
  'cost',
  'durationMs',
];

/**
 * Compares two runs step by step (issue 38 item 3): a run and its fork, a run replayed with
 * another planner or policy set (`npm run eval -- against`), two runs of one test. Steps are
 * aligned by planner turn number (a fork keeps its parent's numbering); ids of runs, turns and
 * calls are not compared, only what was called, with what, and what came back.
 *
 * | field             | from                                                    | compared when                 |
 * |-------------------|---------------------------------------------------------|-------------------------------|
 * | `toolCalls`       | the transcript: tools called, in order                  | always                        |
 * | `inputs`          | the transcript: each call's input (canonical JSON)      | always                        |
 * | `results`         | the transcript: each tool message (result or error)     | always                        |
 * | `hints`           | the transcript: failed calls' retry hints               | always                        |
 * | `awaits`          | the log's `await_*` events (else: an assistant question answered by the user) | always |
 * | `finalAnswer`     | the outcome's / stored run's final response             | always                        |
 * | `policyDecisions` | the log's `policy_decision` events                      | both steps in their run's log |
 * | `tokens`          | the log's `planner_turn.usage`                          | both steps in their run's log |
 * | `cost`            | tokens × `options.pricing`                              | as tokens, with pricing       |
 * | `durationMs`      | the log: planner turn + its calls' `telemetry.durationMs`, within `durationTolerance` | as tokens |
 *
 * `a` and `b` are outcomes (`run.result()`), stored runs (`runtime.load`), or either with its
 * event log (`recordedRun(runtime, runId)`).
 *
 * @throws TypeError when a stored run's snapshot holds no run context.
 */
export function compareRuns(a: RunLike, b: RunLike, options: CompareOptions = {}): RunComparison {
  const left = runRecord(a);
  const right = runRecord(b);
  const tolerance = options.durationTolerance ?? { ms: 100, ratio: 0.5 };
  const turns = [...new Set([...left.steps, ...right.steps].map((s) => s.step))].sort((x, y) => x - y);
  const steps = turns.map((turn) =>
    compareStep(
      left.steps.find((s) => s.step === turn),
      right.steps.find((s) => s.step === turn),
      turn,
      options,
      tolerance,
    ),
  );
  const totals: RunComparison['totals'] = {
    status: label(left.status, right.status),
    finalAnswer: label(left.finalAnswer, right.finalAnswer),
    tokens: label(left.tokens, right.tokens),
    cost: options.pricing ? label(costOf(left.tokens, options), costOf(right.tokens, options)) : 'same',
    durationMs: durationLabel(left.durationMs, right.durationMs, tolerance),
  };
  const first = steps.find((s) => !s.same);
  const notCompared: StepField[] = [];
  if (!left.hasEvents || !right.hasEvents) notCompared.push('policyDecisions', 'tokens', 'durationMs');
  if (!options.pricing) notCompared.push('cost');
  // Wall time is reported, never what makes two runs differ.
  const same =
    first === undefined &&
    Object.entries(totals).every(([field, value]) => field === 'durationMs' || value === 'same');
  const comparison: RunComparison = {
    same,
    ...(first ? { firstDifference: { step: first.step, fields: changedFields(first) } } : {}),
    steps,
    totals,
    notCompared,
    summary: '',
    a: left,
    b: right,
  };
  comparison.summary = summaryOf(comparison);
  return comparison;
}

function compareStep(
  a: StepRecord | undefined,
  b: StepRecord | undefined,
  step: number,
  options: CompareOptions,
  tolerance: { ms: number; ratio: number },
): StepComparison {
  const both = a?.logged && b?.logged;
  const calls = (s: StepRecord | undefined) => s?.calls ?? [];
  const fields: Record<StepField, Label> = {
    toolCalls: label(
      calls(a).map((c) => c.name),
      calls(b).map((c) => c.name),
    ),
    inputs: label(
      calls(a).map((c) => canonical(c.input)),
      calls(b).map((c) => canonical(c.input)),
    ),
    results: label(
      calls(a).map((c) => canonical(c.result)),
      calls(b).map((c) => canonical(c.result)),
    ),
    hints: label(a?.hints ?? [], b?.hints ?? []),
    awaits: label(a?.awaits ?? [], b?.awaits ?? []),
    finalAnswer: label(a?.finalAnswer, b?.finalAnswer),
    policyDecisions: both ? label(a.policyDecisions, b.policyDecisions) : 'same',
    tokens: both ? label(a.tokens, b.tokens) : 'same',
    cost: both && options.pricing ? label(costOf(a.tokens, options), costOf(b.tokens, options)) : 'same',
    durationMs: both ? durationLabel(a.durationMs, b.durationMs, tolerance) : 'same',
  };
  if (a === undefined || b === undefined) for (const field of FIELDS) fields[field] = 'changed';
  const changedCalls: ChangedCall[] = [];
  const count = Math.max(calls(a).length, calls(b).length);
  for (let index = 0; index < count; index++) {
    const x = calls(a)[index];
    const y = calls(b)[index];
    const sameCall =
      x !== undefined &&
      y !== undefined &&
      x.name === y.name &&
      canonical(x.input) === canonical(y.input) &&
      canonical(x.result) === canonical(y.result);
    if (!sameCall) changedCalls.push({ index, ...(x ? { a: x } : {}), ...(y ? { b: y } : {}) });
  }
  const same = FIELDS.every((field) => field === 'durationMs' || fields[field] === 'same');
  return { step, same, fields, changedCalls, ...(a ? { a } : {}), ...(b ? { b } : {}) };
}

function changedFields(step: StepComparison): StepField[] {
  return FIELDS.filter((field) => step.fields[field] === 'changed');
}

/** Equal as canonical JSON (keys sorted; call ids of either run do not matter here). */
function label(a: unknown, b: unknown): Label {
  return canonical(a) === canonical(b) ? 'same' : 'changed';
}

function canonical(value: unknown): string {
  // The fingerprint's canonical JSON under one fixed name: equal values, equal fingerprints.
  return callFingerprint('', value);
}

function durationLabel(
  a: number | undefined,
  b: number | undefined,
  tolerance: { ms: number; ratio: number },
): Label {
  if (a === undefined || b === undefined) return a === b ? 'same' : 'changed';
  const slack = Math.max(tolerance.ms, tolerance.ratio * Math.max(a, b));
  return Math.abs(a - b) <= slack ? 'same' : 'changed';
}

function costOf(
  tokens: { inputTokens: number; outputTokens: number } | undefined,
  options: CompareOptions,
): number | undefined {
  if (!tokens || !options.pricing) return undefined;
  const { inputPerMillion, outputPerMillion } = options.pricing;
  return (tokens.inputTokens * inputPerMillion + tokens.outputTokens * outputPerMillion) / 1e6;
}

function summaryOf(c: RunComparison): string {
  const names = `${c.a.runId} and ${c.b.runId}`;
  const sameSteps = c.steps.filter((s) => s.same).length;
  const lines: string[] = [];
  if (c.same)
    lines.push(`${names} are the same: ${c.steps.length} steps, the same calls, results and answer.`);
  else if (c.firstDifference) {
    const first = c.steps.find((s) => s.step === c.firstDifference!.step)!;
    const calls = first.changedCalls
      .map((call) => `#${call.index + 1} ${call.a?.name ?? '∅'}${describeChange(call)}`)
      .join('; ');
    lines.push(
      `${names} part at step ${first.step}: ${c.firstDifference.fields.join(', ')} changed${calls ? ` (${calls})` : ''}.`,
      `${sameSteps} of ${c.steps.length} steps are the same.`,
    );
  } else lines.push(`${names} take the same steps, but differ as a whole.`);
  const totals = (Object.keys(c.totals) as (keyof RunComparison['totals'])[]).filter(
    (key) => c.totals[key] === 'changed',
  );
  if (totals.length > 0) {
    const tokens = c.a.tokens.inputTokens + c.a.tokens.outputTokens;
    const tokensB = c.b.tokens.inputTokens + c.b.tokens.outputTokens;
    const detail = totals.map((key) =>
      key === 'tokens'
        ? `tokens ${tokens} → ${tokensB}`
        : key === 'finalAnswer'
          ? `final answer ${JSON.stringify(c.a.finalAnswer)} → ${JSON.stringify(c.b.finalAnswer)}`
          : key === 'status'
            ? `status ${c.a.status} → ${c.b.status}`
            : key === 'durationMs'
              ? `duration ${c.a.durationMs} → ${c.b.durationMs} ms`
              : key,
    );
    lines.push(`Changed overall: ${detail.join('; ')}.`);
  }
  if (c.notCompared.length > 0) lines.push(`Not compared: ${c.notCompared.join(', ')}.`);
  return lines.join(' ');
}

function describeChange(call: ChangedCall): string {
  if (!call.a) return ` added: ${call.b!.name} ${JSON.stringify(call.b!.input)}`;
  if (!call.b) return ' removed';
  if (call.a.name !== call.b.name) return ` → ${call.b.name}`;
  if (canonical(call.a.input) !== canonical(call.b.input))
    return ` input ${JSON.stringify(call.a.input)} → ${JSON.stringify(call.b.input)}`;
  return ' result changed';
}
