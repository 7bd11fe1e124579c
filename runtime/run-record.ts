import type { RunContext } from '../machines/run-context.ts';
import type { Message } from '../run/message.ts';
import type { PolicyDecisionRecord, RunEvent } from '../run/run-events.ts';
import type { RunEventRecord, StoredRun } from '../stores/run-store.ts';
import { unpackSnapshot } from './durable/snapshot-codec.ts';
import { positionOf } from './replay-tape.ts';
import type { RunOutcome } from './run-handle.ts';
import type { CoreRuntime as Runtime } from './runtime-api.ts';

/**
 * A run as `compareRuns` and `matchesTrajectory` read it: an outcome (`run.result()`), a stored
 * run (`runtime.load`), or either with its event log (`{ run, events }`, {@link recordedRun}),
 * which adds what only the log holds: policy decisions, awaits, tokens and time per step.
 */
export type RunLike = RunOutcome | StoredRun | RecordedRun;

/** A run with its event log. */
export interface RecordedRun {
  run: RunOutcome | StoredRun;
  events: readonly (RunEvent | RunEventRecord<RunEvent>)[];
}

/** A run's stored row and its whole event log, for `compareRuns` and `matchesTrajectory`. */
export async function recordedRun(
  runtime: Pick<Runtime, 'load' | 'events'>,
  runId: string,
): Promise<RecordedRun> {
  const run = await runtime.load(runId);
  if (!run) throw new Error(`Run ${runId} is not in the store`);
  const events: RunEvent[] = [];
  for await (const record of runtime.events(runId, { follow: false })) events.push(record.event);
  return { run, events };
}

/** One tool call of a step: what was called with what, and what came back (the transcript's tool message). */
export interface CallRecord {
  index: number;
  name: string;
  input: unknown;
  /** The tool message's content: the result, or `{ error, retryHint }`. */
  result: unknown;
}

/** One step (planner turn) of a run, as far as the run's record tells it. */
export interface StepRecord {
  /** The turn number (`<runId>:t<n>`); 0 holds what happened before the first turn (start policies). */
  step: number;
  calls: CallRecord[];
  hints: unknown[];
  policyDecisions: Omit<PolicyDecisionRecord, 'toolCallId'>[];
  /** Questions the step asked a person (clarification, confirmation). */
  awaits: string[];
  /** The run's final answer, on the step that gave it. */
  finalAnswer?: string;
  tokens?: { inputTokens: number; outputTokens: number };
  /** The planner turn's time plus its calls' (ms), from the event log. */
  durationMs?: number;
  /**
   * The event log covers this step (its `planner_turn` is in it): only then are its policy
   * decisions, tokens and time known. A fork's log starts at the fork point; the steps before
   * are its transcript's only.
   */
  logged?: true;
}

/** What a run record holds, normalized. */
export interface RunRecord {
  runId: string;
  status: string;
  steps: StepRecord[];
  finalAnswer?: string;
  tokens: { inputTokens: number; outputTokens: number };
  /** ms: the stored run's `updatedAt - createdAt`, or the event log's first to last event. */
  durationMs?: number;
  /** The path of states the run went through (`planning`, `executing`, …), from its `state_changed` events. */
  states?: string[];
  /** Whether an event log was given (policy decisions, awaits, per-step tokens and time). */
  hasEvents: boolean;
}

/** Normalizes any {@link RunLike} into a {@link RunRecord}. */
export function runRecord(like: RunLike): RunRecord {
  const recorded = 'events' in like && 'run' in like ? (like as RecordedRun) : undefined;
  const run = recorded ? recorded.run : (like as RunOutcome | StoredRun);
  const events = recorded?.events.map((e) => ('seq' in e && 'event' in e ? e.event : e) as RunEvent);
  const base = 'transcript' in run ? fromOutcome(run) : fromStored(run);
  const steps = stepsOf(base.messages);
  if (base.finalAnswer !== undefined) {
    const last = steps.at(-1);
    if (last) last.finalAnswer = base.finalAnswer;
  }
  const record: RunRecord = {
    runId: base.runId,
    status: base.status,
    steps,
    ...(base.finalAnswer === undefined ? {} : { finalAnswer: base.finalAnswer }),
    tokens: base.tokens,
    ...(base.durationMs === undefined ? {} : { durationMs: base.durationMs }),
    hasEvents: events !== undefined,
  };
  if (events) addEvents(record, events);
  return record;
}

interface Base {
  runId: string;
  status: string;
  messages: Message[];
  finalAnswer?: string;
  tokens: { inputTokens: number; outputTokens: number };
  durationMs?: number;
}

function fromOutcome(out: RunOutcome): Base {
  return {
    runId: out.runId,
    status: out.status,
    messages: out.transcript,
    ...(out.finalResponse ? { finalAnswer: out.finalResponse.text } : {}),
    tokens: { inputTokens: out.usage.inputTokens, outputTokens: out.usage.outputTokens },
  };
}

function fromStored(stored: StoredRun): Base {
  const snapshot = unpackSnapshot(stored.snapshot) as { context?: RunContext } | undefined;
  const context = snapshot?.context;
  if (!context) throw new TypeError(`Run ${stored.runId}: its stored snapshot holds no run context`);
  const usage = context.flow.usage ?? { inputTokens: 0, outputTokens: 0 };
  return {
    runId: stored.runId,
    status: stored.status,
    messages: context.messages,
    ...(context.flow.finalResponse ? { finalAnswer: context.flow.finalResponse.text } : {}),
    tokens: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
    durationMs: stored.updatedAt - stored.createdAt,
  };
}

/**
 * The steps the transcript shows: each assistant message is a turn (its calls' ids name it;
 * otherwise the turn after the last), each call paired with its tool message. An assistant text
 * followed by a user message is a question asked (a clarification, a confirmation).
 */
function stepsOf(messages: readonly Message[]): StepRecord[] {
  const results = new Map<string, unknown>();
  for (const message of messages)
    if (message.role === 'tool') results.set(message.toolCallId, message.content);
  const steps: StepRecord[] = [];
  let turn = 0;
  messages.forEach((message, at) => {
    if (message.role !== 'assistant') return;
    const calls = message.toolCalls ?? [];
    const named = calls.length > 0 ? positionOf(calls[0]!.toolCallId)?.turn : undefined;
    turn = named ?? turn + 1;
    const step = stepAt(steps, turn);
    for (const call of calls) {
      const content = results.get(call.toolCallId);
      step.calls.push({
        index: positionOf(call.toolCallId)?.index ?? step.calls.length,
        name: call.toolName,
        input: call.input,
        result: content,
      });
      const hint = (content as { retryHint?: unknown } | undefined)?.retryHint;
      if (content && typeof content === 'object' && 'error' in content && hint !== undefined)
        step.hints.push(hint);
    }
    if (calls.length === 0 && message.content !== undefined && messages[at + 1]?.role === 'user')
      step.awaits.push(message.content);
  });
  return steps;
}

function stepAt(steps: StepRecord[], turn: number): StepRecord {
  let step = steps.find((s) => s.step === turn);
  if (!step) {
    step = { step: turn, calls: [], hints: [], policyDecisions: [], awaits: [] };
    steps.push(step);
    steps.sort((a, b) => a.step - b.step);
  }
  return step;
}

/** What only the event log holds: decisions, awaits, per-step tokens and time, the state path. */
function addEvents(record: RunRecord, events: readonly RunEvent[]): void {
  let turn = 0;
  const awaits = new Map<number, string[]>();
  const states: string[] = [];
  for (const event of events) {
    switch (event.type) {
      case 'planner_turn': {
        turn = positionOf(event.turnId)?.turn ?? turn;
        const step = stepAt(record.steps, turn);
        step.logged = true;
        // A finalizing turn keeps the number of the turn before it: their tokens add up.
        if (event.usage)
          step.tokens = {
            inputTokens: (step.tokens?.inputTokens ?? 0) + event.usage.inputTokens,
            outputTokens: (step.tokens?.outputTokens ?? 0) + event.usage.outputTokens,
          };
        step.durationMs = (step.durationMs ?? 0) + (event.durationMs ?? 0);
        break;
      }
      case 'policy_decision': {
        const step = stepAt(record.steps, positionOf(event.turnId)?.turn ?? turn);
        const { toolCallId: _, ...decision } = event.decision;
        step.policyDecisions.push(decision);
        break;
      }
      case 'tool_result': {
        const step = stepAt(record.steps, positionOf(event.turnId)?.turn ?? turn);
        step.durationMs = (step.durationMs ?? 0) + (event.result.telemetry?.durationMs ?? 0);
        break;
      }
      case 'await_clarification':
        pushAt(awaits, turn, `clarification: ${event.clarification.question}`);
        break;
      case 'await_confirmation':
        pushAt(awaits, turn, `confirmation: ${event.confirmation.question ?? event.confirmation.prompt}`);
        break;
      case 'await_external_tools':
        pushAt(awaits, turn, `external_tools: ${event.externalTools.calls.map((c) => c.name).join(', ')}`);
        break;
      case 'state_changed':
        states.push(event.state);
        break;
    }
  }
  // The log names the waits exactly: it replaces the transcript's reading of them.
  for (const step of record.steps) if (step.logged) step.awaits = awaits.get(step.step) ?? [];
  for (const [at, asked] of awaits) stepAt(record.steps, at).awaits = asked;
  record.states = states;
  if (record.durationMs === undefined && events.length > 0)
    record.durationMs = events.at(-1)!.at - events[0]!.at;
}

function pushAt(map: Map<number, string[]>, key: number, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
