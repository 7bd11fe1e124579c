import type { AwaitClarification } from '../../run/planner.ts';
import { recoverTruncatedJson } from '../../runtime/planners/truncated-json.ts';
import type { RetryHint } from '../../tools/index.ts';
import type { EvalCase } from './eval-case.ts';
import { type ExecutedCall, type ExpectedCall, mismatch, standardize } from './match-ground-truth.ts';

/**
 * The person behind an eval run, answering its AwaitClarification from the ground truth as the
 * one who made the request would: they know what they asked for, not what the model sent.
 *
 * | the question is about                         | the answer gives                                      |
 * |-----------------------------------------------|-------------------------------------------------------|
 * | a failed call (`clarify:<toolCallId>`; its hint names the tool and the input sent) | the values of the missing fields in the ground-truth call of that tool, not done yet, that agrees best with the input sent |
 * | nothing the run called yet (a question before any call) | the values of the missing fields in the call the question was asked for |
 *
 * The answer's text is the later user turn for `multi_turn_miss_param`, else the fields and
 * values in words; its last line holds the values as JSON, which is what the planner reads
 * (`valuesInAnswer`). A field the ground truth leaves out gets no value: the user cannot say.
 */
export interface RunSoFar {
  /** The run's retry hints by the id of the call they are about. */
  hintsByCall: ReadonlyMap<string, RetryHint>;
  /** The calls that ran and succeeded so far: requests the user sees done. */
  executed: readonly ExecutedCall[];
}

export function answerClarification(
  evalCase: EvalCase,
  clarification: AwaitClarification,
  run: RunSoFar,
): string {
  const target = askedAbout(evalCase, clarification, run);
  const values: Record<string, unknown> = {};
  for (const path of clarification.missingFields ?? []) {
    const value = target ? valueAt(target.input, path) : undefined;
    if (value !== undefined) values[path] = value;
  }
  const words = Object.entries(values)
    .map(([path, value]) => `${path} is ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join('; ');
  const text = evalCase.laterTurn ?? (words ? `${words}.` : 'I cannot say more than I did.');
  return `${text}\n${JSON.stringify(values)}`;
}

function askedAbout(
  evalCase: EvalCase,
  clarification: AwaitClarification,
  run: RunSoFar,
): ExpectedCall | undefined {
  const toolCallId = clarification.id.startsWith('clarify:') ? clarification.id.slice('clarify:'.length) : '';
  const hint = run.hintsByCall.get(toolCallId);
  if (!hint) {
    const key = evalCase.firstQuestion?.expectedKey;
    return evalCase.expected.find((call) => call.key === key);
  }
  const prior = hint.priorInput ?? {};
  const sent = typeof prior.$raw === 'string' ? recoverTruncatedJson(prior.$raw).value : prior;
  const done = (call: ExpectedCall) => run.executed.some((ran) => mismatch(ran, call) === undefined);
  const ofTool = evalCase.expected.filter((call) => call.tool === hint.tool);
  const candidates = ofTool.some((call) => !done(call)) ? ofTool.filter((call) => !done(call)) : ofTool;
  let best: ExpectedCall | undefined;
  let bestScore = -1;
  for (const candidate of candidates) {
    const score = Object.entries(sent).filter(([key, value]) =>
      sameSpoken(value, candidate.input[key]),
    ).length;
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

function sameSpoken(a: unknown, b: unknown): boolean {
  const text = (value: unknown) =>
    standardize(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  return b !== undefined && text(a) === text(b);
}

function valueAt(root: unknown, path: string): unknown {
  let at: unknown = root;
  for (const key of path === '' ? [] : path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}
