import { callFingerprint } from '../policies/call-fingerprint.ts';
import { inputValue } from '../runtime/replay-tape.ts';
import { type RunLike, runRecord } from '../runtime/run-record.ts';

/**
 * What an expected call's input is matched with: a value (equal as canonical JSON: keys in any
 * order), a predicate, or an asymmetric matcher (vitest's and Jest's `expect.objectContaining(…)`,
 * anything with `asymmetricMatch`).
 */
export type InputMatcher =
  | unknown
  | ((input: unknown) => boolean)
  | { asymmetricMatch(actual: unknown): boolean };

/** One expected tool call: its tool id and, optionally, its input. */
export interface ExpectedCall {
  name: string;
  /** Absent: any input. */
  input?: InputMatcher;
}

/** The expected trajectory: calls, or calls and the run's state path. */
export type Trajectory = ExpectedCall[] | { calls: ExpectedCall[]; states?: string[] };

/**
 * How calls are matched (the modes of LangChain's agentevals and Strands' trajectory evaluators):
 *
 * | mode        | passes when                                                              |
 * |-------------|--------------------------------------------------------------------------|
 * | `strict`    | the run made exactly the expected calls, in order                         |
 * | `unordered` | the run made exactly the expected calls, in any order                      |
 * | `subset`    | every call the run made is one of the expected (some may be missing)        |
 * | `superset`  | the run made every expected call (and maybe others)                        |
 *
 * In the last three, each expected call matches at most one call of the run (a multiset). The
 * state path (`states`) must be the run's `state_changed` path in `strict` mode, and appear in it
 * in order (gaps allowed) in the others; it needs the run's event log (`recordedRun`).
 */
export type TrajectoryMode = 'strict' | 'unordered' | 'subset' | 'superset';

/** A call the run made, as matched: its tool id and input (JSON text parsed). */
export interface ActualCall {
  name: string;
  input: unknown;
}

/** Why a trajectory did not match: the first thing that did not. */
export interface TrajectoryMismatch {
  /** Position in the expected calls (or in the run's calls, for a call no expectation allows). */
  index: number;
  reason: string;
  expected?: ExpectedCall;
  actual?: ActualCall;
}

/** What `matchesTrajectory` returns. */
export interface TrajectoryMatch {
  pass: boolean;
  firstMismatch?: TrajectoryMismatch;
  /** The run's calls, in order. */
  actual: ActualCall[];
}

/**
 * Whether a run's tool calls follow `expected` (issue 38 item 4); see {@link TrajectoryMode}.
 * `run` is an outcome, a stored run, or either with its event log (`recordedRun`).
 *
 * ```ts
 * matchesTrajectory(outcome, [{ name: 'crm.find' }, { name: 'crm.upsert', input: { plan: 'pro' } }], { mode: 'strict' })
 * // { pass: false, firstMismatch: { index: 1, reason: 'input differs', expected: …, actual: … }, actual: […] }
 * ```
 */
export function matchesTrajectory(
  run: RunLike,
  expected: Trajectory,
  options: { mode?: TrajectoryMode } = {},
): TrajectoryMatch {
  const mode = options.mode ?? 'strict';
  const record = runRecord(run);
  const actual: ActualCall[] = record.steps.flatMap((step) =>
    step.calls.map((call) => ({ name: call.name, input: inputValue(call.input) })),
  );
  const calls = Array.isArray(expected) ? expected : expected.calls;
  const states = Array.isArray(expected) ? undefined : expected.states;
  const mismatch =
    (mode === 'strict' ? strictMismatch(calls, actual) : multisetMismatch(calls, actual, mode)) ??
    (states ? stateMismatch(states, record.states, mode) : undefined);
  return { pass: mismatch === undefined, ...(mismatch ? { firstMismatch: mismatch } : {}), actual };
}

function strictMismatch(expected: ExpectedCall[], actual: ActualCall[]): TrajectoryMismatch | undefined {
  const count = Math.max(expected.length, actual.length);
  for (let index = 0; index < count; index++) {
    const want = expected[index];
    const got = actual[index];
    if (!want) return { index, reason: `unexpected call ${got!.name}`, actual: got };
    if (!got) return { index, reason: `missing call ${want.name}`, expected: want };
    const why = callMismatch(want, got);
    if (why) return { index, reason: why, expected: want, actual: got };
  }
  return undefined;
}

/** A maximum matching of expected calls to actual ones (augmenting paths: matchers may overlap). */
function multisetMismatch(
  expected: ExpectedCall[],
  actual: ActualCall[],
  mode: Exclude<TrajectoryMode, 'strict'>,
): TrajectoryMismatch | undefined {
  const fits = expected.map((want) => actual.map((got) => callMismatch(want, got) === undefined));
  const owner: (number | undefined)[] = actual.map(() => undefined);
  const assign = (e: number, seen: Set<number>): boolean => {
    for (let a = 0; a < actual.length; a++) {
      if (!fits[e]![a] || seen.has(a)) continue;
      seen.add(a);
      if (owner[a] === undefined || assign(owner[a]!, seen)) {
        owner[a] = e;
        return true;
      }
    }
    return false;
  };
  const matched = expected.map((_, e) => assign(e, new Set()));
  if (mode !== 'subset') {
    const missing = matched.indexOf(false);
    if (missing >= 0) {
      const want = expected[missing]!;
      const near = actual.find((got) => got.name === want.name);
      return {
        index: missing,
        reason: near ? `no call of ${want.name} with the expected input` : `missing call ${want.name}`,
        expected: want,
        ...(near ? { actual: near } : {}),
      };
    }
  }
  if (mode !== 'superset') {
    const extra = owner.indexOf(undefined);
    if (extra >= 0)
      return { index: extra, reason: `unexpected call ${actual[extra]!.name}`, actual: actual[extra] };
  }
  return undefined;
}

function callMismatch(want: ExpectedCall, got: ActualCall): string | undefined {
  if (want.name !== got.name) return `expected ${want.name}, got ${got.name}`;
  if (!('input' in want) || want.input === undefined) return undefined;
  return inputMatches(want.input, got.input) ? undefined : 'input differs';
}

function inputMatches(matcher: InputMatcher, input: unknown): boolean {
  if (typeof matcher === 'function') return Boolean((matcher as (input: unknown) => boolean)(input));
  if (
    matcher !== null &&
    typeof matcher === 'object' &&
    typeof (matcher as { asymmetricMatch?: unknown }).asymmetricMatch === 'function'
  )
    return (matcher as { asymmetricMatch(actual: unknown): boolean }).asymmetricMatch(input);
  return callFingerprint('', matcher) === callFingerprint('', input);
}

function stateMismatch(
  expected: string[],
  actual: string[] | undefined,
  mode: TrajectoryMode,
): TrajectoryMismatch | undefined {
  if (actual === undefined)
    return { index: 0, reason: 'the state path needs the run’s event log: pass recordedRun(runtime, runId)' };
  if (mode === 'strict') {
    const at = expected.findIndex((state, i) => actual[i] !== state);
    if (at >= 0 || actual.length !== expected.length) {
      const index = at >= 0 ? at : expected.length;
      return {
        index,
        reason: `state path differs at ${index}: expected ${expected[index] ?? '(end)'}, got ${actual[index] ?? '(end)'}`,
      };
    }
    return undefined;
  }
  let from = 0;
  for (let index = 0; index < expected.length; index++) {
    const found = actual.indexOf(expected[index]!, from);
    if (found < 0)
      return {
        index,
        reason: `state ${expected[index]} not reached (in order) after ${actual[from - 1] ?? 'the start'}`,
      };
    from = found + 1;
  }
  return undefined;
}
