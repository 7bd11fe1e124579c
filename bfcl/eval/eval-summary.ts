import { MISTAKE_KINDS } from '../mistake-model.ts';
import type { CaseKind } from './eval-case.ts';
import type { EvalRecord } from './run-case.ts';

/**
 * The eval's table: one row per category and case kind, a row for the runs over ground truth
 * with a data quirk (`GROUND_TRUTH_QUIRKS`: the correct call is rejected by its own doc, so a
 * run over it cannot end right), a total per category, and a grand total.
 *
 * | column        | counts                                                                  |
 * |---------------|-------------------------------------------------------------------------|
 * | `runs`        | runs                                                                    |
 * | `completed`   | runs that ended with a final answer, no cap                              |
 * | `firstRetry`  | runs where a call failed once and its repair succeeded (of `withFailure`, the runs where a call failed) |
 * | `clarified`   | runs that awaited a clarification                                        |
 * | `capped`      | runs finalized by a cap, the time budget or a policy                     |
 * | `failed`      | runs that failed or were canceled                                        |
 * | `hintAccurate`| runs whose first retry hint named the injected mistake's reason (of `hintExpected`) |
 * | `correct`     | runs whose executed calls match the ground truth                         |
 * | `unfinished`  | runs the store still holds as `running` or `awaiting` at the end (must be 0) |
 * | `medianMs`    | median wall time of a run                                               |
 */
export interface SummaryRow {
  category: string;
  /** A case kind, `data quirk`, or `all`. */
  kind: string;
  runs: number;
  completed: number;
  firstRetry: number;
  withFailure: number;
  clarified: number;
  capped: number;
  failed: number;
  hintAccurate: number;
  hintExpected: number;
  correct: number;
  unfinished: number;
  medianMs: number;
}

export const QUIRK_ROW = 'data quirk';
export const ALL = 'all';

const KIND_ORDER: CaseKind[] = [...MISTAKE_KINDS, 'missing_param', 'asks_first'];

export function summarize(records: readonly EvalRecord[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  const categories = [...new Set(records.map((r) => r.category))];
  for (const category of categories) {
    const ofCategory = records.filter((r) => r.category === category);
    for (const kind of KIND_ORDER) {
      const ofKind = ofCategory.filter((r) => r.kind === kind && r.quirks.length === 0);
      if (ofKind.length > 0) rows.push(row(category, kind, ofKind));
    }
    const quirky = ofCategory.filter((r) => r.quirks.length > 0);
    if (quirky.length > 0) rows.push(row(category, QUIRK_ROW, quirky));
    rows.push(row(category, ALL, ofCategory));
  }
  if (categories.length > 1) rows.push(row(ALL, ALL, records));
  return rows;
}

function row(category: string, kind: string, records: readonly EvalRecord[]): SummaryRow {
  const count = (test: (r: EvalRecord) => boolean) => records.filter(test).length;
  return {
    category,
    kind,
    runs: records.length,
    completed: count((r) => r.outcome === 'completed'),
    firstRetry: count((r) => r.repairedOnFirstRetry === true),
    withFailure: count((r) => r.repairedOnFirstRetry !== undefined),
    clarified: count((r) => r.clarifications > 0),
    capped: count((r) => r.outcome === 'capped'),
    failed: count((r) => r.outcome === 'failed'),
    hintAccurate: count((r) => r.hintAccurate === true),
    hintExpected: count((r) => r.hintAccurate !== undefined),
    correct: count((r) => r.correct),
    unfinished: count((r) => r.storedStatus === 'running' || r.storedStatus === 'awaiting'),
    medianMs: median(records.map((r) => r.durationMs)),
  };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The table's rows, the grand total, and the total over runs whose ground truth has no quirk. */
export interface EvalSummary {
  rows: SummaryRow[];
  total: SummaryRow;
  withoutQuirks: SummaryRow;
}

export function evalSummary(records: readonly EvalRecord[]): EvalSummary {
  return {
    rows: summarize(records),
    total: row(ALL, ALL, records),
    withoutQuirks: row(
      ALL,
      'without data quirks',
      records.filter((r) => r.quirks.length === 0),
    ),
  };
}
