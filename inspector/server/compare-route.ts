import type { Hono } from 'hono';
import { compareRuns, type RunComparison, type StepComparison } from '../../runtime/compare-runs.ts';
import { type RunRecord, recordedRun, type StepRecord } from '../../runtime/run-record.ts';
import type { InspectionStore } from '../inspection-store.ts';
import type { InspectorAnswers } from './inspector-server-options.ts';

/** One side of a comparison as the page gets it: the run, without its steps (they are in `steps`). */
export type ComparedRun = Omit<RunRecord, 'steps' | 'states'> & { key: string };

/**
 * What `GET /api/compare` answers: `compareRuns(a, b)` of the two stored runs with their event
 * logs (runtime/compare-runs.ts), every input, result, hint, decision and answer passed through the
 * inspection store's `sanitize` after comparing (labels are of the real values, what is shown is
 * bounded and without secret keys). No `summary`: it quotes inputs unsanitized; the page words its own.
 */
export interface ComparedRuns extends Omit<RunComparison, 'a' | 'b' | 'summary'> {
  a: ComparedRun;
  b: ComparedRun;
}

/**
 * `GET /api/compare?a=<key>&b=<key>` (issue 38 item 3): two runs held here compared step by step,
 * read from the runtime (`runtime.load` and `runtime.events`, as `recordedRun` does). 400 without
 * two keys; 404 for a run not held here or not in the runtime's store; 501 when the inspector is
 * not attached to a runtime that can load runs.
 */
export function compareRoute(app: Hono, store: InspectionStore, answers: InspectorAnswers | undefined): void {
  app.get('/api/compare', async (c) => {
    const keys = [c.req.query('a'), c.req.query('b')];
    if (!keys[0] || !keys[1]) return c.json({ error: 'expected ?a=<run>&b=<run>' }, 400);
    const runs = keys.map((key) => store.run(key!));
    const missing = keys.find((_, i) => runs[i]?.source !== 'native');
    if (missing !== undefined) return c.json({ error: `no such run here: ${missing}` }, 404);
    const load = answers?.load;
    const events = answers?.events;
    if (!load || !events) {
      return c.json({ error: 'comparing runs needs the runtime (its stored runs and event logs)' }, 501);
    }
    const runtime = { load: load.bind(answers), events: events.bind(answers) };
    let recorded: Awaited<ReturnType<typeof recordedRun>>[];
    try {
      recorded = await Promise.all(
        runs.map((run) => recordedRun(runtime as Parameters<typeof recordedRun>[0], run!.runId)),
      );
    } catch (error) {
      return c.json({ error: error instanceof Error ? error.message : String(error) }, 404);
    }
    const comparison = compareRuns(recorded[0]!, recorded[1]!);
    return c.json(shownComparison(comparison, keys as [string, string], (value) => store.sanitized(value)));
  });
}

/** The comparison as the page is sent it (see {@link ComparedRuns}). */
export function shownComparison(
  comparison: RunComparison,
  [keyA, keyB]: [string, string],
  sanitize: (value: unknown) => unknown,
): ComparedRuns {
  const { a, b, summary: _, steps, ...rest } = comparison;
  const side = ({ steps: _steps, states: _states, ...run }: RunRecord, key: string): ComparedRun => ({
    ...run,
    ...(run.finalAnswer === undefined ? {} : { finalAnswer: String(sanitize(run.finalAnswer)) }),
    key,
  });
  const call = <T extends { input: unknown; result: unknown }>(record: T): T => ({
    ...record,
    input: sanitize(record.input),
    result: sanitize(record.result),
  });
  const stepShown = (record: StepRecord): StepRecord => ({
    ...record,
    calls: record.calls.map(call),
    hints: record.hints.map(sanitize),
    policyDecisions: record.policyDecisions.map(sanitize) as StepRecord['policyDecisions'],
    awaits: record.awaits.map((text) => String(sanitize(text))),
    ...(record.finalAnswer === undefined ? {} : { finalAnswer: String(sanitize(record.finalAnswer)) }),
  });
  const shownSteps: StepComparison[] = steps.map((step) => ({
    ...step,
    changedCalls: step.changedCalls.map((changed) => ({
      index: changed.index,
      ...(changed.a ? { a: call(changed.a) } : {}),
      ...(changed.b ? { b: call(changed.b) } : {}),
    })),
    ...(step.a ? { a: stepShown(step.a) } : {}),
    ...(step.b ? { b: stepShown(step.b) } : {}),
  }));
  return { ...rest, steps: shownSteps, a: side(a, keyA), b: side(b, keyB) };
}
