import { planParse } from '../../machines/plan-output.ts';
import { type RunContext, turnId } from '../../machines/run-context.ts';
import type { PlanActorInput, PlanActorOutput, RunPort, TaskArgs } from '../../machines/run-ports.ts';
import { deadlineAt } from '../../machines/run-updates.ts';
import { composeWrappers, type PlanInvocation } from '../../plugins/define-plugin.ts';
import { deepFreeze } from '../../policies/policy-json.ts';
import type { CapsState } from '../../run/caps.ts';
import { type FinalizeNotice, finalizeMessage, type NotMadeCall } from '../../run/finalize-notice.ts';
import type { Message } from '../../run/message.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { waitUntil } from '../../run/wait-until.ts';
import { toJsonValue } from '../../tools/parse-arguments.ts';
import { toolResultFromJSON } from '../../tools/tool-result.ts';
import { advertisedTools, type RunDeps, runInfo } from './run-deps.ts';
import { scheduleTurn } from './turn-scheduler.ts';

/**
 * The `plan` port: builds the planner's input from the run context, asks the planner through
 * the plugins' `wrapPlan` hooks, and bounds the call by the time budget (docs/architecture.md: the budget
 * "also bounds a planner call in flight"). The deadline is recomputed from stored timestamps, so
 * a restored run waits only for what is left. The planner's `signal` aborts when the budget runs
 * out or the run is canceled; either way the actor settles at once, holding no timer.
 *
 * | kind       | planner call  | deadline                                                       |
 * |------------|---------------|----------------------------------------------------------------|
 * | `start`    | `planStart`   | `startedAt + timeBudgetMs` (+ time spent awaiting answers)     |
 * | `resume`   | `planResume`  | `startedAt + timeBudgetMs` (+ time spent awaiting answers)     |
 * | `finalize` | `planResume` with `finalize`, `tools: []` | the later of that and when finalizing began, plus the grace ({@link finalizeGraceOf}) |
 */
export function createPlanPort(deps: RunDeps): RunPort<PlanActorInput, PlanActorOutput> {
  const invoke = composeWrappers(
    deps.plugins.flatMap((plugin) => (plugin.wrapPlan ? [plugin.wrapPlan.bind(plugin)] : [])),
    async (plan: PlanInvocation): Promise<PlanResult> =>
      plan.kind === 'start'
        ? deps.planner.planStart(plan.input)
        : deps.planner.planResume(plan.input as PlanResumeInput),
  );
  return (task) => {
    const { context, kind } = task.input;
    const deadline = planDeadline(context, kind, deps.finalizeGraceMs);
    if (Date.now() >= deadline) return { timedOut: true };
    return new Promise<PlanActorOutput>((resolve, reject) => {
      const turn = new PlanTurn(task, resolve, reject);
      turn.stopWaiting = waitUntil(deadline, () => turn.timeUp());
      if (turn.settled) return;
      if (task.onStop) task.onStop(() => turn.stop());
      // Left on the signal once settled: it can fire only once more, to no effect, and goes
      // with the controller.
      else task.controller.signal.addEventListener('abort', turn, { once: true });
      let planInput: PlanInput | PlanResumeInput | undefined;
      // The input for a turn after a large batch (its results, O(calls) to build: a 10,000-call
      // batch's took ~10 ms) is built in the turn's own macrotask, not in the run's step that
      // folded the batch (issue 36 item 5).
      if (context.batch.lastResults.length <= LARGE_ANSWER_CALLS) {
        planInput = inputFor(deps, context, kind, turn);
        if (planInput === undefined) return;
      }
      // Turns start from the turn scheduler's macrotasks: a planner that answers at once (a
      // script, a cache) would otherwise chain every step of every run in one run of
      // microtasks, and timers, I/O and lease renewals would starve (issue 12 defect 4).
      scheduleTurn(() => {
        if (turn.settled) return;
        planInput ??= inputFor(deps, context, kind, turn);
        if (planInput === undefined) return;
        let pending: Promise<PlanResult>;
        turn.startedAt = Date.now();
        try {
          pending = invoke(planInvocation(deps, context, kind, planInput));
        } catch (err) {
          // A `wrapPlan` hook that is not an async function threw: the turn fails with it (the
          // scheduler would swallow the throw, and the run would wait for its deadline).
          turn.fail(err);
          return;
        }
        pending.then(
          (result) => turn.answer(result),
          (err: unknown) => turn.fail(err),
        );
      });
    });
  };
}

/** The turn's planner input, its advertised tools noted on the turn; `undefined` when building it failed the turn. */
function inputFor(
  deps: RunDeps,
  context: RunContext,
  kind: PlanActorInput['kind'],
  turn: PlanTurn,
): PlanInput | PlanResumeInput | undefined {
  try {
    const input = buildPlanInput(deps, context, kind, turn);
    turn.tools = input.tools.map((tool) => tool.name);
    return input;
  } catch (err) {
    turn.fail(err);
    return undefined;
  }
}

/** What `wrapPlan` hooks see of a turn: the planner's model and the run's spend only when there are. */
function planInvocation(
  deps: RunDeps,
  context: RunContext,
  kind: PlanActorInput['kind'],
  input: PlanInput | PlanResumeInput,
): PlanInvocation {
  const plan: PlanInvocation = { kind, input, run: runInfo(context) };
  const model = deps.planner.model;
  if (model !== undefined) plan.model = model;
  if (context.flow.cost !== undefined) plan.cost = context.flow.cost;
  return plan;
}

/**
 * One planner turn in flight: settles once, by the planner's answer, the deadline, or the
 * controller's abort (the run stopped; it is the abort listener itself, `handleEvent`). Methods,
 * not closures made for every turn.
 */
class PlanTurn {
  settled = false;
  /** Cancels the deadline's timer; set once it is armed (`waitUntil` may fire at once). */
  stopWaiting: () => void = noop;
  /** Whether the planner's signal was read: only then is there a controller to abort. */
  private signalRead = false;
  /** The run stopped or the deadline passed: the planner's deltas are no longer published. */
  aborted = false;
  private timedOut = false;

  constructor(
    private readonly task: TaskArgs<PlanActorInput>,
    private readonly resolve: (output: PlanActorOutput) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /**
   * The planner's signal: the task's own controller's, made on first read (an AbortSignal costs
   * ~2 µs to make on Node 20, and a scripted or cached planner never reads it). Stopping the
   * actor (cancel) aborts it, and so does the deadline.
   */
  get signal(): AbortSignal {
    this.signalRead = true;
    const { controller } = this.task;
    // First read after the deadline passed: the signal is aborted already, as it would have been.
    if (this.timedOut && !controller.signal.aborted) controller.abort(new Error('Time budget exhausted'));
    return controller.signal;
  }

  /** When the planner was asked (epoch ms), and the tools it was shown: for the `planner_turn` event. */
  startedAt = 0;
  tools: string[] = [];

  /** The planner answered: its result as JSON, or a PlannerOutputError. */
  answer(result: PlanResult): void {
    if (!this.settle()) return;
    const json = planResultAsJson(result);
    if (!json.ok) {
      this.reject(new PlannerOutputError(json.message));
      return;
    }
    const { startedAt, tools } = this;
    const output: PlanActorOutput = {
      result: json.value as PlanResult,
      startedAt,
      durationMs: Date.now() - startedAt,
      tools,
    };
    if (json.forbiddenKeys !== undefined) output.forbiddenKeys = json.forbiddenKeys;
    if (callsIn(output.result) > LARGE_ANSWER_CALLS) handOverLarge(output, this.resolve);
    else this.resolve(output);
  }

  fail(error: unknown): void {
    if (this.settle()) this.reject(error);
  }

  /** The deadline passed: the planner's signal aborts, the turn times out. */
  timeUp(): void {
    if (!this.settle()) return;
    this.aborted = true;
    this.timedOut = true;
    if (this.signalRead) this.task.controller.abort(new Error('Time budget exhausted'));
    this.resolve({ timedOut: true });
  }

  /** The run stopped (`onStop`). */
  stop(): void {
    this.aborted = true;
    this.fail(new DOMException('This operation was aborted', 'AbortError'));
  }

  /** The controller aborted (the run stopped), for a task without `onStop`. */
  handleEvent(): void {
    this.aborted = true;
    this.fail(this.task.controller.signal.reason);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.stopWaiting();
    return true;
  }
}

function noop(): void {}

/**
 * An answer of more tool calls than this is made ready for the run here, in the port, and handed
 * over after a macrotask ({@link handOverLarge}).
 */
export const LARGE_ANSWER_CALLS = 64;

const callsIn = (result: PlanResult | undefined): number => {
  const calls = (result as { toolCalls?: unknown } | undefined)?.toolCalls;
  return Array.isArray(calls) ? calls.length : 0;
};

/**
 * A large answer's O(calls) work split from the run's step that takes it in (issue 36 item 5: a
 * 10,000-call answer held the event loop ~30 ms in that one step): its JSON copy deep-frozen now
 * (the run keeps it frozen, as its `planner_turn` event's `result`, and freezes nothing frozen
 * already) and parsed against the PlanResult schema (the machine's guards read this parse, cached
 * by output: plan-output.ts); then answered after a macrotask, so timers and I/O run between.
 */
function handOverLarge(output: PlanActorOutput, resolve: (output: PlanActorOutput) => void): void {
  deepFreeze(output.result);
  planParse({ output });
  setImmediate(() => resolve(output));
}

/** A planner's result JSON cannot carry (a function, a cycle, a BigInt) or over its bounds: fails that run only. */
export class PlannerOutputError extends Error {
  override readonly name = 'PlannerOutputError';
}

/** Notes kept from one planner turn, and characters kept of each (issue 12: 100k notes took 8 s). */
export const MAX_PLANNER_NOTES = 32;
export const MAX_PLANNER_NOTE_CHARS = 4_096;

/**
 * Bounds of one planner result (16 MiB of JSON, as a tool result; 1,000,000 values): a final
 * answer's data may be large, and each tool call's input meets the boundary's own caps after. A
 * bigger result is refused from its size before it is walked (issue 24 item 8: a tool input of
 * `new Array(1e7)` was copied whole, seconds, before the boundary refused it).
 */
export const MAX_PLAN_RESULT_BYTES = 16 * 1024 * 1024;
export const MAX_PLAN_RESULT_VALUES = 1_000_000;

/**
 * The planner's result as the run keeps it: a plain JSON copy (so nothing a store cannot hold
 * reaches the snapshot: issue 12 defect 1) within {@link MAX_PLAN_RESULT_BYTES} and
 * {@link MAX_PLAN_RESULT_VALUES}, with at most {@link MAX_PLANNER_NOTES} notes of at most
 * {@link MAX_PLANNER_NOTE_CHARS} characters. Anything else about its shape is the machine's
 * schema check.
 */
export function planResultAsJson(
  result: unknown,
): { ok: true; value: unknown; forbiddenKeys?: Record<number, string[]> } | { ok: false; message: string } {
  const json = toJsonValue(result, {
    subject: 'Plan result',
    maxBytes: MAX_PLAN_RESULT_BYTES,
    maxElements: MAX_PLAN_RESULT_VALUES,
  });
  if (!json.ok)
    return {
      ok: false,
      message:
        json.kind === 'too_large'
          ? `Planner returned a PlanResult over the run's bounds: ${json.message}`
          : `Planner returned an invalid PlanResult, a value JSON cannot carry: ${json.message}`,
    };
  const value = json.value as { notes?: unknown } | null;
  if (value !== null && typeof value === 'object' && Array.isArray(value.notes)) {
    const notes = value.notes;
    if (
      notes.length > MAX_PLANNER_NOTES ||
      notes.some((n) => typeof n === 'string' && n.length > MAX_PLANNER_NOTE_CHARS)
    ) {
      const kept = notes
        .slice(0, MAX_PLANNER_NOTES)
        .map((n) =>
          typeof n === 'string' && n.length > MAX_PLANNER_NOTE_CHARS
            ? `${n.slice(0, MAX_PLANNER_NOTE_CHARS)}…`
            : n,
        );
      if (notes.length > MAX_PLANNER_NOTES)
        kept.push(`(${notes.length - MAX_PLANNER_NOTES} more notes left out)`);
      value.notes = kept;
    }
  }
  const forbiddenKeys = toolInputForbiddenKeys(json.forbiddenKeys);
  return forbiddenKeys === undefined ? { ok: true, value } : { ok: true, value, forbiddenKeys };
}

/**
 * The forbidden keys (`__proto__`/`constructor`/`prototype`) the copy left out of tool calls'
 * inputs, by call index, as paths inside each input (`toolCalls.0.input.a.__proto__` → 0:
 * `a.__proto__`); `undefined` when there are none. Elsewhere in a result such a key is only dropped.
 */
function toolInputForbiddenKeys(paths: readonly string[]): Record<number, string[]> | undefined {
  let out: Record<number, string[]> | undefined;
  for (const path of paths) {
    const match = /^toolCalls\.(\d+)\.input\.(.+)$/s.exec(path);
    if (!match) continue;
    out ??= {};
    const index = Number(match[1]);
    out[index] = [...(out[index] ?? []), match[2]!];
  }
  return out;
}

/** The default finalizing grace's share of the run's time budget, and its bounds, ms. */
export const FINALIZE_GRACE = { share: 0.1, minMs: 1_000, maxMs: 30_000 } as const;

/**
 * The time the finalizing turn gets past the time budget (or past when finalizing began), ms:
 * `finalizeGraceMs` when the runtime sets one, else a tenth of the run's `timeBudgetMs`, at least
 * 1 s and at most 30 s (issue 36 item 6: a fixed 30 s let a hung planner outlive a 5 s budget
 * sevenfold). The default budget (300 s) keeps the 30 s it always had.
 */
export function finalizeGraceOf(timeBudgetMs: number, finalizeGraceMs: number | undefined): number {
  if (finalizeGraceMs !== undefined) return finalizeGraceMs;
  const share = Math.round(timeBudgetMs * FINALIZE_GRACE.share);
  return Math.min(FINALIZE_GRACE.maxMs, Math.max(FINALIZE_GRACE.minMs, share));
}

/** When a planner call of `kind` must have answered by, epoch ms (see the table above). */
export function planDeadline(
  context: RunContext,
  kind: PlanActorInput['kind'],
  finalizeGraceMs: number | undefined,
): number {
  const budgetEnd = deadlineAt(context);
  if (kind !== 'finalize') return budgetEnd;
  const grace = finalizeGraceOf(context.caps.timeBudgetMs, finalizeGraceMs);
  return Math.max(budgetEnd, context.flow.finalize?.at ?? 0) + grace;
}

export function capsState(context: RunContext): CapsState {
  // Object.assign, not `{ ...caps, toolCalls, ... }`: Node 20's V8 takes ~0.5 µs for each
  // member added after a spread (~2.3 µs here, every turn); the result is the same object.
  return Object.assign({}, context.caps, {
    toolCalls: context.toolCalls,
    remainingToolCalls: Math.max(0, context.caps.maxToolCalls - context.toolCalls),
    consecutiveFailedToolCalls: context.consecutiveFailures,
    deadlineAt: deadlineAt(context),
  });
}

function buildPlanInput(
  deps: RunDeps,
  context: RunContext,
  kind: PlanActorInput['kind'],
  turn: PlanTurn,
): PlanInput | PlanResumeInput {
  const base = {
    runId: context.runId,
    turnId: turnId(context),
    agentId: context.agent.id,
    sessionId: context.sessionId,
    messages: readonlyTranscript(context.messages),
    tools: kind === 'finalize' ? [] : advertisedTools(deps, context),
    caps: capsState(context),
    labels: { ...context.labels },
    [PLAN_TURN]: turn,
  } as PlanInput & { [PLAN_TURN]: PlanTurn };
  // A member like any other to the planner (spreads and JSON see it), made when first read.
  Object.defineProperty(base, 'signal', PLAN_SIGNAL);
  const publish = deps.publishDelta;
  if (publish) {
    const { runId, turnId: id } = base;
    base.onDelta = (delta) => {
      if (!turn.aborted) publish(runId, id, delta);
    };
  }
  if (kind === 'start') return base;
  // Added to `base` (ours, not yet handed out) rather than spread into a new object: see capsState.
  return Object.assign(base, {
    // The run's own objects, frozen: a planner must not change the run (nor its stored snapshot).
    toolResults: context.batch.lastResults.map((result) => toolResultFromJSON(deepFreeze(result))),
    clarification: deepFreeze(context.flow.answer?.clarification),
    confirmation: deepFreeze(context.flow.answer?.confirmation),
    finalize: kind === 'finalize' ? finalizeNotice(context) : undefined,
  });
}

/** Where a PlanInput keeps its turn, for {@link PLAN_SIGNAL}. */
const PLAN_TURN = Symbol('toolwarden.planTurn');

/**
 * PlanInput's `signal`: an accessor made once, defined on each input (a getter of the input's own
 * in its literal is ~4x slower to make, and V8 keeps the input as a dictionary). Assigning one
 * replaces it (the turn's own is not handed on then).
 */
const PLAN_SIGNAL: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { [PLAN_TURN]: PlanTurn }): AbortSignal {
    return this[PLAN_TURN].signal;
  },
  set(value: AbortSignal | undefined) {
    Object.defineProperty(this, 'signal', { value, writable: true, enumerable: true, configurable: true });
  },
};

/**
 * What the finalizing turn is told (issue 24 item 2): the reason, the policy and its note when a
 * policy decided, the calls of the last batch that were not made (refused, denied, stopped with
 * their batch), and all of it as a message for a model.
 */
export function finalizeNotice(context: RunContext): FinalizeNotice {
  const finalize = context.flow.finalize;
  const notMade: NotMadeCall[] = [];
  for (const result of context.batch.lastResults) {
    if (result.executed) continue;
    notMade.push({
      name: result.name,
      toolCallId: result.toolCallId,
      ...(result.providerToolCallId === undefined ? {} : { providerToolCallId: result.providerToolCallId }),
      ...(result.error?.message ? { why: result.error.message } : {}),
    });
  }
  const notice: FinalizeNotice = { reason: finalize?.reason ?? 'policy' };
  if (finalize?.policy !== undefined) notice.policy = finalize.policy;
  if (finalize?.note !== undefined) notice.note = finalize.note;
  notice.notMade = notMade;
  notice.message = finalizeMessage(notice, { caps: context.caps });
  return notice;
}

/**
 * The transcript as the planner gets it: its own array (push away), holding the run's message
 * objects deep-frozen, so a planner cannot rewrite the run's history, nor the stored run, which
 * a memory store keeps as these very objects (docs/durability.md §Memory store). Nothing is
 * copied: deep-cloning the transcript every turn cost O(transcript) per step (~30 µs at 20
 * messages); a message frozen once (deeply) is passed over.
 */
export function readonlyTranscript(messages: Message[]): Message[] {
  // The messages appended since a turn of this run last handed the transcript out are not frozen
  // yet: from the end, up to the first frozen one.
  let last = messages.length - 1;
  while (last >= 0 && !Object.isFrozen(messages[last])) last--;
  // Before it, the transcript that turn handed out, object for object, when the run only appended
  // (the usual case): checked by identity, not walked again. What differs (a message replaced,
  // another transcript altogether) is frozen from its first difference.
  const before = last >= 0 ? handedOut.get(messages[last]!) : undefined;
  let from = 0;
  if (before !== undefined) {
    handedOut.delete(messages[last]!);
    if (before.length === last + 1) while (from <= last && messages[from] === before[from]) from++;
  }
  for (let i = from; i < messages.length; i++) deepFreeze(messages[i]);
  if (messages.length > 0) handedOut.set(messages[messages.length - 1]!, messages);
  return messages.slice();
}

/**
 * The transcript a turn handed out (all of it deep-frozen), by its last message: the next turn of
 * the run finds it there and passes over what it holds (issue 29 item 1: every message was checked
 * every turn, O(run) a step). One entry per run: a hit replaces it.
 */
const handedOut = new WeakMap<Message, Message[]>();
