/**
 * The side-by-side comparison of two runs (issue 38 item 3), pure: `GET /api/compare`'s answer
 * (`compareRuns` of the two stored runs and logs, runtime/compare-runs.ts) turned into what the
 * page draws: a row per step, labelled same or changed, the first difference marked, each side's
 * calls, hints, questions and answer as lines, each line marked when it is what changed.
 */
import type { ComparedRuns } from '../server/compare-route.ts';

/** One run's side of a step. */
export interface CompareSide {
  /** False when the run has no such step (it ended before, or took more). */
  present: boolean;
  lines: { text: string; changed: boolean }[];
}

/** One step of the two runs. */
export interface CompareRow {
  step: number;
  label: 'same' | 'changed';
  /** The first step that differs. */
  first: boolean;
  /** What differs at this step: `inputs, results`. */
  fields: string;
  a: CompareSide;
  b: CompareSide;
}

/** What the compare panel shows. */
export interface CompareView {
  a: { runId: string; key: string; status: string };
  b: { runId: string; key: string; status: string };
  /** `part at step 6: inputs, results changed · 5 of 21 steps the same`, or that they are the same. */
  verdict: string;
  /** The runs as a whole: `status same`, `final answer changed: "balance 210" → "balance 804"`, … */
  totals: string[];
  rows: CompareRow[];
  /** `not compared: cost (no pricing)`, or ''. */
  notCompared: string;
}

/** Longest value shown in a line, characters. */
const SHOWN_CHARS = 160;
const shown = (value: unknown): string => {
  const text = value === undefined ? '–' : typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
};

type StepComparison = ComparedRuns['steps'][number];
const ms = (value: number | undefined) => (value === undefined ? undefined : `${value} ms`);
type StepRecord = NonNullable<StepComparison['a']>;

/** A side's lines: its calls (`#1 ledger.add {"amount":6} → {"balance":21}`), hints, questions, answer, tokens. */
function sideOf(step: StepComparison, which: 'a' | 'b'): CompareSide {
  const record: StepRecord | undefined = step[which];
  if (!record) return { present: false, lines: [{ text: 'no such step', changed: true }] };
  const changedAt = new Set(step.changedCalls.map((call) => call.index));
  const fields = step.fields;
  const lines: CompareSide['lines'] = record.calls.map((call) => ({
    text: `#${call.index + 1} ${call.name} ${shown(call.input)} → ${shown(call.result)}`,
    changed: changedAt.has(call.index),
  }));
  for (const hint of record.hints)
    lines.push({ text: `hint: ${shown(hint)}`, changed: fields.hints === 'changed' });
  for (const decision of record.policyDecisions) {
    lines.push({ text: `policy: ${shown(decision)}`, changed: fields.policyDecisions === 'changed' });
  }
  for (const asked of record.awaits)
    lines.push({ text: `asks: ${shown(asked)}`, changed: fields.awaits === 'changed' });
  if (record.finalAnswer !== undefined) {
    lines.push({ text: `answer: ${shown(record.finalAnswer)}`, changed: fields.finalAnswer === 'changed' });
  }
  if (record.tokens) {
    lines.push({
      text: `${record.tokens.inputTokens} in / ${record.tokens.outputTokens} out tok`,
      changed: fields.tokens === 'changed',
    });
  }
  if (lines.length === 0) lines.push({ text: 'no calls', changed: false });
  return { present: true, lines };
}

const FIELD_WORDS: Record<string, string> = {
  toolCalls: 'tools called',
  inputs: 'inputs',
  results: 'results',
  policyDecisions: 'policy decisions',
  hints: 'hints',
  awaits: 'questions',
  finalAnswer: 'final answer',
  tokens: 'tokens',
  cost: 'cost',
  durationMs: 'duration',
};

/** Builds the panel's view of a comparison. */
export function compareView(comparison: ComparedRuns): CompareView {
  const firstStep = comparison.firstDifference?.step;
  const rows: CompareRow[] = comparison.steps.map((step) => ({
    step: step.step,
    label: step.same ? 'same' : 'changed',
    first: step.step === firstStep,
    fields: Object.entries(step.fields)
      .filter(([field, label]) => label === 'changed' && field !== 'durationMs')
      .map(([field]) => FIELD_WORDS[field] ?? field)
      .join(', '),
    a: sideOf(step, 'a'),
    b: sideOf(step, 'b'),
  }));
  const sameSteps = rows.filter((row) => row.label === 'same').length;
  const verdict = comparison.same
    ? `the runs are the same: ${rows.length} steps, the same calls, results and answer`
    : comparison.firstDifference
      ? `part at step ${comparison.firstDifference.step}: ${comparison.firstDifference.fields
          .map((field) => FIELD_WORDS[field] ?? field)
          .join(', ')} changed · ${sameSteps} of ${rows.length} steps the same`
      : `the same ${rows.length} steps, but the runs differ as a whole`;
  const { a, b } = comparison;
  const totals = (Object.entries(comparison.totals) as [keyof ComparedRuns['totals'], string][])
    // A field not compared (cost without pricing) is said once, under not compared.
    .filter(([field]) => !(comparison.notCompared as string[]).includes(field))
    .map(([field, label]) => {
      const word = field === 'status' ? 'status' : (FIELD_WORDS[field] ?? field);
      if (label === 'same') return `${word} same`;
      const values: Record<string, [unknown, unknown]> = {
        status: [a.status, b.status],
        finalAnswer: [a.finalAnswer, b.finalAnswer],
        tokens: [a.tokens.inputTokens + a.tokens.outputTokens, b.tokens.inputTokens + b.tokens.outputTokens],
        durationMs: [ms(a.durationMs), ms(b.durationMs)],
      };
      const pair = values[field];
      return pair ? `${word} changed: ${shown(pair[0])} → ${shown(pair[1])}` : `${word} changed`;
    });
  return {
    a: { runId: a.runId, key: a.key, status: a.status },
    b: { runId: b.runId, key: b.key, status: b.status },
    verdict,
    totals,
    rows,
    notCompared: comparison.notCompared.length
      ? `not compared: ${comparison.notCompared.map((field) => FIELD_WORDS[field] ?? field).join(', ')}`
      : '',
  };
}

/** The runs picked in the list to compare, after a click on `key`'s box: at most two, the older pick let go. */
export function togglePick(picked: readonly string[], key: string): string[] {
  if (picked.includes(key)) return picked.filter((k) => k !== key);
  return [...picked, key].slice(-2);
}
