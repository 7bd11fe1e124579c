/**
 * Forking a run from one of its steps (issue 27 item 4): `runtime.fork(runId, { atEvent, edit })`
 * starts a new run from the snapshot the parent had at that step, optionally with an edited tool
 * input or a clarification answer, under a new run id linked to its parent.
 *
 * | forked at (the parent's event `atEvent`)        | the new run starts                                                     |
 * |-------------------------------------------------|------------------------------------------------------------------------|
 * | `tool_call_scheduled` / `tool_result` of a call | from the `planning` step that proposed the call, its plan replayed with `edit.input` for that call: validated, admitted and run again |
 * | `await_clarification`                           | waiting for that clarification; `edit.answer` answers it at once         |
 * | any other event                                 | from the step the parent was in right after that event                  |
 *
 * Links: the child's labels `toolwarden.fork.parent`, `toolwarden.fork.at` and, when the parent
 * was traced, `toolwarden.fork.traceparent` (its `run_started` carries them; plugins read them in
 * `onRunStart`: the telemetry plugin links the fork's first `invoke_agent` span to the parent's
 * span by it), and a `run_forked` event in both runs' logs. Ids of turns and calls are the child's (`<child>:t2:c1`), so a forked call
 * never reuses the parent's idempotency key.
 *
 * The steps come from {@link StepHistory}: the snapshots the runtime persists at each step
 * boundary, kept in memory for the most recent runs (`forks: { maxRuns }`).
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { createActor } from 'xstate';
import { recordToolCallsUpdate } from '../machines/run-actions.ts';
import type { RunContext } from '../machines/run-context.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import type { RunEvent } from '../run/run-events.ts';
import { FORK_AT_LABEL, FORK_PARENT_LABEL, FORK_TRACEPARENT_LABEL } from '../telemetry/attributes.ts';
import type { RunHandle } from './run-handle.ts';
import type { RuntimeParts } from './runtime-api.ts';

/** What `runtime.fork` takes. */
export interface ForkOptions {
  /** The parent's event to fork at: its `seq` in the run's event log (`runtime.events(runId)`), 1 = `run_started`. */
  atEvent: number;
  /** A changed input for the call the event is about, or an answer to the clarification it asks. */
  edit?: { input: unknown } | { answer: string };
  /** The new run's id. Default: a random UUID. */
  runId?: string;
}

/** Thrown when a run cannot be forked where asked (unknown run, step not kept, edit that does not fit). */
export class ForkError extends Error {
  override readonly name = 'ForkError';
}

/** The labels a forked run carries; named beside the span attributes that the telemetry plugin reads them into. */
export { FORK_AT_LABEL, FORK_PARENT_LABEL, FORK_TRACEPARENT_LABEL };

interface Step {
  /** Events the run had emitted when this snapshot was persisted. */
  events: number;
  /** The persisted snapshot (immutable: the runtime writes a new one per step). */
  snapshot: { value: unknown; context: RunContext } & Record<string, unknown>;
}

/**
 * The persisted snapshot of every step of the most recent runs, in memory (the runtime's hook in
 * `host-run.ts` calls {@link record}); the oldest run's steps go first past `maxRuns`.
 */
export class StepHistory {
  private readonly runs = new Map<string, Step[]>();
  constructor(
    private readonly maxRuns = 100,
    private readonly maxSteps = 500,
  ) {}

  record(runId: string, snapshot: unknown, events: number): void {
    let steps = this.runs.get(runId);
    if (!steps) {
      steps = [];
      this.runs.set(runId, steps);
      if (this.runs.size > this.maxRuns) this.runs.delete(this.runs.keys().next().value!);
    }
    steps.push({ events, snapshot: snapshot as Step['snapshot'] });
    if (steps.length > this.maxSteps) steps.shift();
  }

  steps(runId: string): readonly Step[] {
    return this.runs.get(runId) ?? [];
  }
}

/** `runtime.fork`: see the module's table. */
export async function forkRun(
  parts: RuntimeParts,
  history: StepHistory,
  parentId: string,
  options: ForkOptions,
): Promise<RunHandle> {
  const steps = history.steps(parentId);
  if (steps.length === 0) throw new ForkError(`Run ${parentId}: no steps kept here to fork from`);
  const [event] = await parts.store.readEvents(parentId, { afterSeq: options.atEvent - 1, limit: 1 });
  if (!event || event.seq !== options.atEvent)
    throw new ForkError(`Run ${parentId} has no event ${options.atEvent}`);
  const parentEvent = event.event as RunEvent;
  const childId = options.runId ?? randomUUID();
  const edit = options.edit;
  const toolCallId =
    parentEvent.type === 'tool_call_scheduled'
      ? parentEvent.toolCallId
      : parentEvent.type === 'tool_result'
        ? parentEvent.result.toolCallId
        : undefined;

  let snapshot: Step['snapshot'];
  let answer: { id: string; answer: string } | undefined;
  if (toolCallId !== undefined) {
    // The step that proposed the call (planning), its plan replayed with the edited input.
    const proposed = steps.findIndex((step) =>
      step.snapshot.context.batch.pending.some((call) => call.toolCallId === toolCallId),
    );
    const planning = steps
      .slice(0, Math.max(0, proposed))
      .findLast((step) => stateOf(step.snapshot.value) === 'planning');
    if (proposed < 0 || !planning)
      throw new ForkError(`Run ${parentId}: the step of call ${toolCallId} is not kept`);
    const calls = steps[proposed]!.snapshot.context.batch.pending.map((call) => ({
      name: call.name,
      ...(call.providerToolCallId === undefined ? {} : { toolCallId: call.providerToolCallId }),
      input: call.toolCallId === toolCallId && edit && 'input' in edit ? edit.input : call.input,
    }));
    const base = renamed(planning.snapshot, parentId, childId);
    const context = {
      ...base.context,
      ...recordToolCallsUpdate(base.context, {
        type: 'plan.done',
        output: { result: { toolCalls: calls } },
      } as never),
    };
    snapshot = { ...base, value: { validating: 'checking' }, context };
  } else {
    // A clarification is found by its id (the nearest such step), so events logged outside the
    // run's own steps (a `run_forked`) cannot shift it; any other event by the count of events.
    const asked = parentEvent.type === 'await_clarification' ? parentEvent.clarification.id : undefined;
    const waiting = steps.filter((step) => {
      const awaiting = step.snapshot.context.flow.awaiting;
      return awaiting?.kind === 'clarification' && awaiting.clarification.id === asked;
    });
    const nearest = waiting.sort(
      (a, b) => Math.abs(a.events - options.atEvent) - Math.abs(b.events - options.atEvent),
    )[0];
    const at = nearest ?? steps.find((step) => step.events >= options.atEvent) ?? steps.at(-1)!;
    snapshot = renamed(at.snapshot, parentId, childId);
    if (edit && 'answer' in edit) {
      const awaiting = snapshot.context.flow.awaiting;
      if (awaiting?.kind !== 'clarification')
        throw new ForkError(`Run ${parentId} awaits no clarification at event ${options.atEvent}`);
      answer = { id: awaiting.clarification.id, answer: edit.answer };
    }
  }
  if (edit && 'input' in edit && toolCallId === undefined)
    throw new ForkError(
      `Event ${options.atEvent} of run ${parentId} is no tool call: its input cannot be edited`,
    );

  const traceparent = snapshot.context.traceContext?.traceparent;
  const labels = {
    ...snapshot.context.labels,
    [FORK_PARENT_LABEL]: parentId,
    [FORK_AT_LABEL]: String(options.atEvent),
    ...(traceparent ? { [FORK_TRACEPARENT_LABEL]: traceparent } : {}),
  };
  const context: RunContext = { ...snapshot.context, labels, startedAt: Date.now(), traceContext: null };
  const actor = createActor(parts.machine, {
    snapshot: { ...snapshot, status: 'active', output: undefined, error: undefined, context } as never,
    inspect: parts.inspect,
    input: undefined as never,
  });
  const info: RunInfo = {
    runId: childId,
    agent: parts.settings.agent,
    sessionId: context.sessionId,
    labels,
    traceContext: null,
  };
  parts.hooks.notifyRunStart(info, 'start');
  const child = parts.host(actor, undefined, 'start');

  // Both logs say so: the child where it came from, the parent where it went.
  const note = { at: Date.now(), parentRunId: parentId, childRunId: childId, atEvent: options.atEvent };
  const edited = edit === undefined ? undefined : 'input' in edit ? 'input' : 'answer';
  for (const runId of [childId, parentId]) {
    const forked = { type: 'run_forked', runId, ...note, ...(edited ? { edit: edited } : {}) } as RunEvent;
    await parts.durable.flush(runId).catch(() => undefined);
    await parts.store.appendEvents(runId, [{ event: forked, at: note.at }]);
    parts.hooks.eachPlugin('onEvent', (plugin) => plugin.onEvent?.(forked, { ...info, runId }));
  }
  if (answer) await child.provideClarification(answer);
  return child;
}

/** The state a snapshot is in, as `planning` or `awaiting.clarification`. */
function stateOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value as Record<string, unknown>)[0] ?? [];
  return inner === undefined ? String(key) : `${key}.${stateOf(inner)}`;
}

/** A deep copy of a step's snapshot with the parent's id replaced by the child's, in every id. */
function renamed(snapshot: Step['snapshot'], parentId: string, childId: string): Step['snapshot'] {
  const text = JSON.stringify(snapshot)
    .split(JSON.stringify(parentId))
    .join(JSON.stringify(childId))
    .split(`"${jsonInner(parentId)}:`)
    .join(`"${jsonInner(childId)}:`);
  return JSON.parse(text);
}

function jsonInner(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
