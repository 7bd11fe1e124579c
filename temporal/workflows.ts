/**
 * The Temporal workflow that hosts a run (issue 14, docs/temporal.md §Workflow): the same run
 * machine as the in-process runtime, inside Temporal's deterministic sandbox. Planner turns,
 * validation, tool calls and policy reviews are activities (see `activities.ts`), supplied to the
 * machine with `provide()`; waits are durable timers; answers arrive as signals and an update.
 * This module (and everything it imports) must stay free of Node built-ins: the worker bundles it.
 *
 * @module
 */
import {
  ActivityFailure,
  type ActivityOptions,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  TemporalFailure,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { createActor } from 'xstate';
import { persistedSnapshotOf } from '../machines/persisted-snapshot.ts';
import type { InDoubtResolution, RunContext } from '../machines/run-context.ts';
import { runMachine } from '../machines/run-machine.ts';
import type { ExecuteToolInput, PlanActorInput } from '../machines/run-ports.ts';
import { runSteps } from '../machines/run-steps.ts';
import type { RunEvent } from '../run/run-events.ts';
import { migrateSnapshot, SnapshotMigrationError } from '../runtime/durable/snapshot-migration.ts';
import { MAX_CAUSE_DEPTH } from '../tools/tool-error.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { ToolwardenActivities } from './activities.ts';
import { awaitedQuestion, currentDetails, RUN_MEMO, type RunMemo } from './run-visibility.ts';
import {
  type ArchivedTranscript,
  PrefixDigests,
  type TranscriptPage,
  transcriptPage,
} from './transcript-ref.ts';
import {
  type ContinuedRun,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_RESULT_BYTES,
  DEFAULT_RESULT_TOOL_RESULTS,
  type RunEventsPage,
  type RunWorkflowInput,
  type RunWorkflowResult,
  type RunWorkflowStatus,
  SEARCH_ATTRIBUTES,
} from './workflow-types.ts';

export const clarificationSignal = defineSignal<[{ id: string; answer: string }]>('provide.clarification');
export const toolResultsSignal =
  defineSignal<[{ id: string; results: ToolResultJSON[] }]>('provide.toolResults');
export const cancelSignal = defineSignal<[{ reason?: string }]>('cancel');
/** Settles the calls the run holds in doubt (docs/durability.md §Effects): toolCallId → resolution. */
export const inDoubtSignal =
  defineSignal<[{ resolutions: Record<string, InDoubtResolution> }]>('resolve.inDoubt');
export const confirmUpdate = defineUpdate<
  void,
  [{ id: string; approved: boolean; by?: string; reason?: string }]
>('confirm');
export const statusQuery = defineQuery<RunWorkflowStatus>('status');
export const eventsQuery = defineQuery<RunEventsPage, [number]>('events');
/** Messages `from … to − 1` of the run's transcript, a page (~1 MB) at a time (`transcript-ref.ts`). */
export const transcriptQuery = defineQuery<TranscriptPage, [number, number]>('transcript');

/** Events kept in the workflow for the `events` query (older ones are in the history only). */
const EVENT_BUFFER = 2_000;
/** Events handed to the next execution when the workflow continues as new. */
const EVENTS_CARRIED = 100;
/**
 * JSON characters the events handed on hold at most (the newest that fit): with results inline up
 * to the workers' `inlineBytes`, 100 events could otherwise hold megabytes.
 */
const EVENTS_CARRIED_BYTES = 256 * 1024;
const STATUS_KEY = { name: SEARCH_ATTRIBUTES.status, type: 'KEYWORD' } as const;
const AWAITING_KEY = { name: SEARCH_ATTRIBUTES.awaiting, type: 'KEYWORD' } as const;
/** Stood in for the run's context in a child's input of a snapshot handed on by an earlier release. */
const SAME_CONTEXT = '$context';

/**
 * An activity run in its own cancellation scope, canceled when the machine leaves the state. A
 * failed activity (its retries spent) rejects with its cause, named as thrown in the worker, so
 * the run records why (`Planner failed: the model server is down`), not Temporal's wrapper
 * (`Activity task failed`), and with that error's own causes (see {@link thrownInWorker}).
 */
async function cancellable<T>(signal: AbortSignal, run: () => Promise<T>): Promise<T> {
  const scope = new CancellationScope();
  signal.addEventListener('abort', () => scope.cancel());
  try {
    return await scope.run(run);
  } catch (error) {
    if (!(error instanceof ActivityFailure) || !error.cause) throw error;
    throw thrownInWorker(error.cause);
  }
}

/**
 * The error a worker threw, rebuilt from the failure Temporal carried (each `Error.cause` of it a
 * failure's `cause`): an Error per link, named by the failure's type (the class name the worker's
 * converter recorded), so the run keeps the chain as the in-process runtime does (a provider error
 * over `connect ECONNREFUSED`; machines/run-actions.ts `plannerErrorOf`). At most
 * MAX_CAUSE_DEPTH + 1 links are rebuilt: `ToolError.from` cuts the chain at MAX_CAUSE_DEPTH with
 * its truncation marker, as for an error thrown in process.
 */
function thrownInWorker(failure: Error): Error {
  const links: Error[] = [];
  for (let at: unknown = failure; at instanceof Error && links.length <= MAX_CAUSE_DEPTH; at = at.cause) {
    links.push(at);
  }
  let cause: Error | undefined;
  for (const link of links.reverse()) {
    const error = new Error(link.message, cause === undefined ? undefined : { cause });
    error.name = failureName(link);
    cause = error;
  }
  return cause as Error;
}

/**
 * The class name a failure stands for: an ApplicationFailure's type (the worker converts what an
 * activity throws into one typed by the error's class), else, for a bare TemporalFailure, `Error`:
 * Temporal's converter keeps only the message and stack of an error's causes, not their classes.
 */
function failureName(failure: Error): string {
  if (failure instanceof ApplicationFailure && failure.type) return failure.type;
  return failure.constructor === TemporalFailure ? 'Error' : failure.name;
}

export async function toolwardenRun(input: RunWorkflowInput): Promise<RunWorkflowResult> {
  // The machine copies the app's messages with structuredClone, which the sandbox lacks; they
  // are JSON (workflow input), so a JSON copy is the same.
  globalThis.structuredClone ??= <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  // Every activity heartbeats (activities.ts): a lost worker is noticed at the heartbeat timeout,
  // seconds, and a cancel reaches the running step. The start-to-close timeouts are backstops.
  const heartbeatTimeout = input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  // Only infrastructure failures retry here (a lost worker): tool failures, hints and
  // validation come back as results for the planner to repair, never as activity errors.
  const retry = { maximumAttempts: 5, initialInterval: '1 second' };
  const planOptions: ActivityOptions = {
    // The plan step bounds itself by the run's time budget; this is a backstop.
    startToCloseTimeout: input.run.caps.timeBudgetMs + 60_000,
    heartbeatTimeout,
    retry,
  };
  const steps = proxyActivities<ToolwardenActivities>(planOptions);
  // The boundary check and the policy review are short, CPU-only steps: local activities, run by
  // the worker that runs the workflow task, recorded as markers, no round trip to the server.
  const checks = proxyLocalActivities<ToolwardenActivities>({
    startToCloseTimeout: 60_000,
    retry,
  });
  // Each tool's timeout as the worker that planned the call reported it (activities.ts), else as
  // the client gave it. Carried across continue-as-new (one entry a tool).
  const workerTimeouts: Record<string, number> = { ...input.continued?.toolTimeoutsMs };
  const toolOptions = (step: ExecuteToolInput): ActivityOptions => ({
    startToCloseTimeout:
      (workerTimeouts[step.call.name] ??
        input.toolTimeoutsMs?.[step.call.name] ??
        input.defaultToolTimeoutMs ??
        60_000) + 5_000,
    heartbeatTimeout,
    retry,
    // What the Web UI and `temporal workflow show` name the activity with.
    summary: `${step.call.name} · ${step.meta.toolCallId.slice(input.run.runId.length + 1)}`,
  });
  const machine = runMachine.provide({
    actors: {
      runSteps: runSteps({
        plan: ({ input: step, controller }) => {
          // An idle point: the next execution restores the machine here and runs the turn.
          if (continueDue()) {
            continuing = true;
            return new Promise<never>(() => {});
          }
          plannedHere += 1;
          const summary = `turn ${step.context.turn} · ${step.kind === 'finalize' ? 'finalize' : 'plan'}`;
          return cancellable(controller.signal, async () => {
            const { toolTimeoutsMs, ...output } = await steps.plan.executeWithOptions(
              { ...planOptions, summary },
              [planInput(step)],
            );
            Object.assign(workerTimeouts, toolTimeoutsMs);
            return output;
          });
        },
        // Policies never read the transcript: it stays out of the local activities' inputs.
        validateBatch: ({ input: step, controller }) =>
          cancellable(controller.signal, () =>
            checks.validateBatch({ context: { ...step.context, messages: [] } }),
          ),
        executeTool: ({ input: step, controller }) =>
          cancellable(controller.signal, () =>
            steps.executeTool.executeWithOptions(toolOptions(step), [
              // The run's trace context rides along, so the call's span joins the run's trace.
              { ...step, traceContext: actor.getSnapshot().context.traceContext },
            ]),
          ),
        reviewResults: ({ input: step, controller }) =>
          cancellable(controller.signal, () =>
            checks.reviewResults({ context: { ...step.context, messages: [] } }),
          ),
        sleepUntil: ({ input: step }) => sleep(Math.max(0, step.until - Date.now())),
      }),
    },
    // Validation and review are activities (the tools and policies live in the worker).
    guards: { consultsPolicies: () => true },
  });

  const continued = input.continued;
  const events: RunEvent[] = continued?.events ?? [];
  // The last results only: what the workflow keeps, hands on and returns does not grow with the run.
  const keepResults = input.resultToolResults ?? DEFAULT_RESULT_TOOL_RESULTS;
  const resultBytes = input.resultBytes ?? DEFAULT_RESULT_BYTES;
  const toolResults: ToolResultJSON[] = (continued?.toolResults ?? []).slice(-keepResults);
  let toolResultCount = continued?.toolResultCount ?? toolResults.length;
  let first = continued?.first ?? 0;
  let crashed: unknown;
  // The transcript leaves history (transcript-ref.ts): a planner turn gets the messages new since
  // the last turn, the transcript's length and digest; the worker reads the rest by query. Its
  // first `base` messages were archived in the payload store by an earlier execution
  // (transcript-archive.ts): the machine's `context.messages` holds the messages from `base` on.
  const archived = continued?.archived;
  const base = archived?.length ?? 0;
  const digests = new PrefixDigests(base, archived?.digest);
  let sentMark = continued?.sentMark ?? 0;
  const planInput = (step: PlanActorInput) => {
    const messages = step.context.messages;
    const length = base + messages.length;
    const tailFrom = Math.min(Math.max(sentMark, base), length);
    sentMark = length;
    return {
      ...step,
      // Planners never read the context's hints (each failed call's tool message carries its
      // own): out of the turn's input, whose history copy they made grow with the run (issue 36 item 7).
      context: { ...step.context, messages: [], hints: [] },
      transcript: {
        length,
        digest: digests.extend(messages),
        tailFrom,
        tail: messages.slice(tailFrom - base),
        ...(archived ? { archived } : {}),
      },
    };
  };
  // Continue as new at an idle point once Temporal suggests it or a configured limit is reached,
  // and only after this execution took a planner turn (a huge transcript cannot loop).
  let continuing = false;
  let plannedHere = 0;
  // Runs started by a worker without continue-as-new (their histories lack this marker) never
  // continue as new when a newer worker replays them: that would be a command their history lacks.
  const mayContinue = patched('toolwarden.continue-as-new');
  // Likewise runs started before the transcript's archive (transcript-archive.ts) continue as new
  // without it. Asked here, at the start: a patch asked later, after a local activity that outlived
  // its workflow task, is looked for in another task on replay than the one it was recorded in.
  const mayArchive = patched('toolwarden.transcript-archive');
  const continueDue = () => {
    if (plannedHere === 0 || !mayContinue) return false;
    const info = workflowInfo();
    const limits = input.history ?? {};
    return (
      info.continueAsNewSuggested ||
      (limits.maxEvents !== undefined && info.historyLength >= limits.maxEvents) ||
      (limits.maxBytes !== undefined && info.historySize >= limits.maxBytes)
    );
  };
  const actor = createActor(
    machine,
    continued
      ? // Handed on by a worker of any release, migrated to this one's snapshot format.
        { snapshot: continuedSnapshot(continued.snapshot) as never, input: input.run }
      : { input: input.run },
  );
  const push = (event: RunEvent) => {
    if (event.type === 'tool_result') {
      toolResults.push(event.result as ToolResultJSON);
      if (toolResults.length > keepResults) toolResults.shift();
      toolResultCount += 1;
    }
    events.push(event);
    if (events.length > EVENT_BUFFER) {
      events.shift();
      first += 1;
    }
  };
  // The events the in-process runtime's host adds, for the same log: run_started, state_changed,
  // and the terminal event held until the state_changed into the final state is out.
  let terminal: RunEvent | undefined;
  let previous: string | undefined = continued?.state;
  actor.on('*', (event) => {
    const runEvent = event as RunEvent;
    if (
      runEvent.type === 'run_completed' ||
      runEvent.type === 'run_failed' ||
      runEvent.type === 'run_canceled'
    ) {
      terminal = runEvent;
    } else push(runEvent);
  });
  // XState's own unhandled-error reporting does nothing in the sandbox: observe errors here.
  actor.subscribe({
    next: () => {
      const state = stateName(actor.getSnapshot().value);
      if (state !== previous) {
        push({ type: 'state_changed', runId: input.run.runId, at: Date.now(), state, previous } as RunEvent);
        previous = state;
        publish();
      }
      if (terminal) {
        push(terminal);
        terminal = undefined;
      }
    },
    error: (error) => (crashed = error),
  });
  if (!continued) {
    push({
      type: 'run_started',
      runId: input.run.runId,
      at: Date.now(),
      agentId: input.run.agent.id,
      ...(input.run.sessionId === undefined ? {} : { sessionId: input.run.sessionId }),
      labels: input.run.labels ?? {},
    } as RunEvent);
  }
  const execution = (continued?.executions ?? 0) + 1;

  const awaiting = () => {
    const flow = actor.getSnapshot().context.flow.awaiting;
    if (!flow) return null;
    const id =
      flow.kind === 'clarification'
        ? flow.clarification.id
        : flow.kind === 'external_tools'
          ? flow.externalTools.id
          : flow.kind === 'confirmation'
            ? flow.confirmation.id
            : undefined;
    return { kind: flow.kind, ...(id === undefined ? {} : { id }) };
  };
  const status = (): RunWorkflowStatus => {
    const snapshot = actor.getSnapshot();
    const state = stateName(snapshot.value);
    const final = snapshot.status === 'done' ? state : undefined;
    return {
      status: final ?? (state.startsWith('awaiting') ? 'awaiting' : 'running'),
      state,
      awaiting: awaiting(),
      eventCount: first + events.length,
      execution,
    };
  };
  setHandler(statusQuery, status);
  // What Temporal shows (run-visibility.ts): the current details at every state change; the memo
  // and search attributes when the status or what it awaits changes (each one history event), for
  // runs whose client asked for them (`visibility`; runs started before it never write them).
  const visible = input.visibility;
  let shown = continued ? '' : 'running||';
  const publish = () => {
    const now = status();
    const context = actor.getSnapshot().context;
    // After continue-as-new the execution has no start summary (the command carries none):
    // the details begin with it instead (issue 36 item 7).
    const details = currentDetails(context, now);
    setCurrentDetails(continued && input.summary ? `${input.summary}\n\n${details}` : details);
    if (!visible) return;
    const key = `${now.status}|${now.awaiting?.kind ?? ''}|${now.awaiting?.id ?? ''}`;
    if (key === shown) return;
    shown = key;
    const question = awaitedQuestion(context);
    const memo: RunMemo = {
      status: now.status,
      state: now.state,
      awaiting: now.awaiting,
      ...(question === undefined ? {} : { question }),
    };
    upsertMemo({ [RUN_MEMO]: memo });
    if (visible.searchAttributes) {
      upsertSearchAttributes([
        { key: STATUS_KEY, value: now.status },
        { key: AWAITING_KEY, value: now.awaiting?.kind ?? null },
      ]);
    }
  };
  setHandler(eventsQuery, (from: number) => ({
    events: events.slice(Math.max(0, from - first)),
    next: first + events.length,
    first,
  }));
  // Positions are the transcript's: those archived (below `base`) are read from the store, not here.
  setHandler(transcriptQuery, (from: number, to: number) => {
    if (from < base) return { messages: [], next: from };
    const page = transcriptPage(actor.getSnapshot().context.messages, from - base, to - base);
    return { messages: page.messages, next: page.next + base };
  });
  setHandler(clarificationSignal, (answer) => actor.send({ type: 'provide.clarification', ...answer }));
  setHandler(toolResultsSignal, (answer) => actor.send({ type: 'provide.toolResults', ...answer }));
  setHandler(inDoubtSignal, ({ resolutions }) => actor.send({ type: 'resolve.inDoubt', resolutions }));
  setHandler(cancelSignal, ({ reason }) =>
    actor.send({ type: 'cancel', ...(reason === undefined ? {} : { reason }) }),
  );
  setHandler(
    confirmUpdate,
    (answer) => {
      actor.send({ type: 'confirm', ...answer });
    },
    {
      // A wrong id is rejected to the caller, not swallowed by the machine's guard.
      validator: (answer) => {
        const now = awaiting();
        if (now?.kind !== 'confirmation' || now.id !== answer.id) {
          throw new Error(
            `The run awaits ${now ? `${now.kind} ${now.id ?? ''}`.trim() : 'nothing'}, not confirmation "${answer.id}"`,
          );
        }
      },
    },
  );

  actor.start();
  // Idle while awaiting an answer (a backoff timer is restored from its stored deadline).
  const idleAwaiting = () => stateName(actor.getSnapshot().value).startsWith('awaiting') && continueDue();
  /**
   * At continue-as-new: the messages workers were sent (`sentMark`; those after belong to the
   * turn in progress) go to the payload store through a worker, so the next execution's input
   * carries a reference instead of them (transcript-archive.ts). Undefined when the worker has no
   * store, or the archive failed: the next execution then carries them, as before.
   */
  const archive = async (): Promise<ArchivedTranscript | undefined> => {
    if (!mayArchive) return undefined;
    const to = sentMark;
    const digest = digests.at(to);
    if (to <= base || digest === undefined) return undefined;
    try {
      const stored = await steps.archiveTranscript.executeWithOptions(
        {
          startToCloseTimeout: 60_000,
          heartbeatTimeout,
          retry: { maximumAttempts: 3, initialInterval: '1 second' },
          summary: `transcript · messages ${base}–${to}`,
        },
        [{ runId: input.run.runId, from: base, to, digest, ...(archived ? { previous: archived } : {}) }],
      );
      return stored ?? undefined;
    } catch (error) {
      if (isCancellation(error)) throw error;
      return undefined;
    }
  };
  let archivedNow: ArchivedTranscript | undefined;
  try {
    await condition(
      () => actor.getSnapshot().status !== 'active' || crashed !== undefined || continuing || idleAwaiting(),
    );
    if (crashed === undefined && actor.getSnapshot().status === 'active') archivedNow = await archive();
  } catch (error) {
    if (isCancellation(error)) actor.send({ type: 'cancel', reason: 'the workflow was canceled' });
    throw error;
  }
  if (crashed !== undefined) {
    throw ApplicationFailure.nonRetryable(
      `The run machine failed: ${String((crashed as Error)?.message ?? crashed)}`,
      'RunStepError',
    );
  }
  if (actor.getSnapshot().status === 'active') {
    const persisted = persistedSnapshotOf(actor) as { context: RunContext };
    const carried = newestWithin(events.slice(-EVENTS_CARRIED), EVENTS_CARRIED_BYTES);
    const next: ContinuedRun = {
      // Without the archived messages: what crosses is one turn's messages, not the run's.
      snapshot: archivedNow
        ? {
            ...persisted,
            context: {
              ...persisted.context,
              messages: persisted.context.messages.slice(archivedNow.length - base),
            },
          }
        : persisted,
      events: carried,
      first: first + events.length - carried.length,
      toolResults: newestWithin(toolResults, resultBytes),
      toolResultCount,
      ...(previous === undefined ? {} : { state: previous }),
      sentMark,
      ...((archivedNow ?? archived) ? { archived: archivedNow ?? archived } : {}),
      executions: execution,
      toolTimeoutsMs: workerTimeouts,
    };
    actor.stop();
    // The app's first messages are in the snapshot's transcript (or its archive): not again.
    return continueAsNew<typeof toolwardenRun>({
      ...input,
      run: { ...input.run, messages: [] },
      continued: next,
    });
  }
  const snapshot = actor.getSnapshot();
  const flow = snapshot.context.flow;
  const outcome = status().status as RunWorkflowResult['status'];
  return {
    status: outcome,
    ...(flow.finalResponse ? { finalResponse: flow.finalResponse } : {}),
    ...(flow.error ? { error: flow.error } : {}),
    toolResults: newestWithin(toolResults, resultBytes),
    toolResultCount,
    ...(flow.usage ? { usage: flow.usage } : {}),
    events: first + events.length,
    executions: execution,
  };
}

/** The newest of `items` whose JSON adds up to at most `chars` characters (oldest first). */
function newestWithin<T>(items: readonly T[], chars: number): T[] {
  let total = 0;
  let from = items.length;
  while (from > 0) {
    total += JSON.stringify(items[from - 1]).length;
    if (total > chars) break;
    from--;
  }
  return items.slice(from);
}

/**
 * The snapshot an earlier execution handed on, in this release's format (docs/durability.md
 * §Upgrades): its `$context` references put back, then migrated. One this worker cannot migrate
 * fails the run (a non-retryable SnapshotMigrationError); one from a newer release fails the
 * workflow task, which Temporal retries until a worker of that release takes it.
 */
function continuedSnapshot(persisted: unknown): unknown {
  try {
    return migrateSnapshot(withContext(persisted));
  } catch (error) {
    if (error instanceof SnapshotMigrationError)
      throw ApplicationFailure.nonRetryable(error.message, error.name);
    throw error;
  }
}

type PersistedChildren = Record<string, { snapshot?: { input?: { context?: unknown } } }>;

/**
 * A snapshot handed on by a worker of an earlier release, whose children's inputs referred to the
 * run's context as `$context` (a planner turn was a child invoked with the context), with the
 * context put back. Since the `steps` actor no child's input holds the context, so a snapshot
 * handed on now needs nothing of this.
 */
function withContext(persisted: unknown): unknown {
  const snapshot = persisted as { context: unknown; children: PersistedChildren };
  for (const child of Object.values(snapshot.children)) {
    const input = child.snapshot?.input;
    if (input?.context === SAME_CONTEXT) input.context = snapshot.context;
  }
  return snapshot;
}

/** A state value, dotted: `awaiting.clarification`. */
function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  return Object.entries(value as Record<string, unknown>)
    .map(([key, child]) => `${key}.${stateName(child)}`)
    .join(',');
}
