/**
 * Hosting a run (step 5 of `createRuntime`, with the handle): wires a started or restored actor to
 * its {@link RunHandle}, the plugins' `onEvent` hooks and the store.
 *
 * | moment                          | what the host does                                               |
 * |---------------------------------|------------------------------------------------------------------|
 * | run started                     | `run_started`, then the start policies' `policy_decision` events  |
 * | run restored                    | `run_resumed` (its saved state is not logged again)               |
 * | each actor event                | published, persisted, `onEvent`; a terminal event is held back     |
 * | each snapshot with news         | `state_changed` when the state moved, the held terminal event, a write |
 * | final state                     | the run leaves `live`, its handle closes                          |
 * | actor error (a bug in a step)   | a `run_failed` event, like any failed run                         |
 *
 * @module
 */

import { persistedSnapshotOf } from '../machines/persisted-snapshot.ts';
import type { PendingCall } from '../machines/run-context.ts';
import type { RunActorRef } from '../machines/run-machine.ts';
import { STEPS_ACTOR_ID } from '../machines/run-steps.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import type { PolicyDecisionRecord, RunEvent } from '../run/run-events.ts';
import type { StoredRun } from '../stores/run-store.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import { ToolError } from '../tools/tool-error.ts';
import type { DurableRuns } from './durable/durable-runs.ts';
import type { RunPersister } from './durable/run-persister.ts';
import { RunHandle, runStatusOf, stateName } from './run-handle.ts';
import type { LiveRuns } from './runtime-deps.ts';
import type { OnRuntimeError } from './runtime-options.ts';
import type { PluginHooks } from './runtime-plugins.ts';
import type { StepHistory } from './step-history.ts';
import { runInfo } from './steps/run-deps.ts';

/** Events that end a run; each run's event log ends with one of them. */
const TERMINAL_EVENTS = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_canceled']);

/** What hosting runs needs from the runtime. */
export interface RunHostParts {
  agent: RunInfo['agent'];
  catalog: ToolCatalog;
  live: LiveRuns;
  durable: DurableRuns;
  hooks: PluginHooks;
  onError: OnRuntimeError;
  /** Keeps each step's persisted snapshot for `runtime.fork` (run-fork.ts), when forks are on. */
  steps?: StepHistory;
}

/** Wires a started or restored actor to its handle, plugins and store, and starts it. */
export type HostRun = (
  actor: RunActorRef,
  stored: StoredRun | undefined,
  how: 'start' | 'resume',
  startDecisions?: PolicyDecisionRecord[],
) => RunHandle;

/** The runtime's {@link HostRun}. */
export function createRunHost(parts: RunHostParts): HostRun {
  return function host(actor, stored, how, startDecisions = []) {
    if (actor.getSnapshot().status !== 'active') {
      // A finished run restored from the store: nothing to host or write, only its outcome.
      const handle = new RunHandle(actor, parts.catalog);
      actor.start();
      handle.close();
      handle.settle();
      return handle;
    }
    const hosted = new HostedRun(parts, actor, stored, how);
    hosted.start(how, startDecisions);
    return hosted.handle;
  };
}

/**
 * One hosted run: the actor's observer (`next`, `error`) and emitted-event listener. A class, not
 * closures over the host's locals: a run waiting for an answer keeps it, and four closures with
 * their scope were ~0.3 KB of every such run (issue 29 item 3).
 */
class HostedRun {
  readonly handle: RunHandle;
  private readonly runId: string;
  private readonly persist: RunPersister;
  private readonly onEvent: boolean;
  private emitted = false;
  private dispatched = 0;
  /**
   * The run's last event is its terminal one (run_completed, run_failed, run_canceled): it is
   * held until the state_changed into the final state is out (issue 12, defect 9).
   */
  private terminal: RunEvent | undefined;
  /** The state last logged; a restored run already logged the state it is in. */
  private previous: string | undefined;
  /** The context of the last snapshot written (a restored one counts: a restore changes nothing). */
  private written: object | undefined;
  /** The batch {@link toolCallIdsOf} last listed, and its ids. */
  private idsFor: readonly PendingCall[] | undefined;
  private ids: string[] = [];

  constructor(
    private readonly parts: RunHostParts,
    private readonly actor: RunActorRef,
    stored: StoredRun | undefined,
    how: 'start' | 'resume',
  ) {
    const { context } = actor.getSnapshot();
    this.runId = context.runId;
    // A restored run that was evicted here keeps the handle the app may still hold.
    const kept = how === 'resume' ? parts.durable.suspended(this.runId) : undefined;
    this.handle = kept?.rebind(actor) ?? new RunHandle(actor, parts.catalog);
    parts.live.set(this.runId, this.handle);
    this.persist = parts.durable.track(this.handle, {
      stored,
      agentId: parts.agent.id,
      sessionId: context.sessionId,
    });
    this.onEvent = parts.hooks.has('onEvent');
    if (how === 'resume') {
      this.previous = stateName(actor.getSnapshot());
      this.written = context;
    }
  }

  /** Subscribes to the actor, logs the start (or the restore), starts the actor. */
  start(how: 'start' | 'resume', startDecisions: PolicyDecisionRecord[]): void {
    const { actor, runId } = this;
    actor.on('*', this.emittedEvent.bind(this));
    actor.subscribe(this);
    const context = actor.getSnapshot().context;
    if (how === 'start') {
      this.dispatch({
        type: 'run_started',
        runId,
        at: Date.now(),
        agentId: this.parts.agent.id,
        sessionId: context.sessionId,
        labels: context.labels,
      });
      for (const decision of startDecisions) {
        this.dispatch({ type: 'policy_decision', runId, at: Date.now(), turnId: `${runId}:t0`, decision });
      }
    } else {
      // The restore is marked by its own event, not by logging the saved state again. Being an
      // event, it also makes the first observe write the run, which records the tool calls in
      // flight for the write-ahead gate (they wait for it).
      this.dispatch({
        type: 'run_resumed',
        runId,
        at: Date.now(),
        state: stateName(actor.getSnapshot()),
        owner: this.parts.durable.owner,
      });
    }
    actor.start();
    settleActorOptions(actor);
    const steps = actor.getSnapshot().children[STEPS_ACTOR_ID];
    if (steps !== undefined) settleActorOptions(steps);
    this.next();
  }

  /** An event the actor emitted: published, persisted, `onEvent`; a terminal one held back. */
  private emittedEvent(event: unknown): void {
    if (TERMINAL_EVENTS.has((event as RunEvent).type)) this.terminal = event as RunEvent;
    else this.dispatch(event as RunEvent);
  }

  private dispatch(emittedEvent: RunEvent): void {
    this.dispatched++;
    // The store's own when it keeps it in memory: the handle replays that same object.
    const event = this.persist.event(emittedEvent);
    this.handle.publish(event);
    this.emitted = true;
    if (!this.onEvent) return;
    const { context, status } = this.actor.getSnapshot();
    const info = runInfo(context);
    this.parts.hooks.eachPlugin('onEvent', (plugin) => plugin.onEvent?.(event, info));
    // A plugin gave the run a new trace context (the telemetry plugin: its latest segment, which
    // a segment after a restart links): kept in the context, so stored with the next write.
    if (info.traceContext !== context.traceContext && info.traceContext && status === 'active') {
      this.actor.send({ type: 'trace.context', traceContext: info.traceContext });
    }
  }

  /**
   * Each snapshot (the actor's observer). Persisted at every step boundary (a new state), and
   * whenever a step emitted events without changing state (a tool result while the rest of the
   * batch runs): nothing emitted is only in memory.
   */
  next(): void {
    const { actor, runId, handle, persist, parts } = this;
    const snapshot = actor.getSnapshot();
    const state = stateName(snapshot);
    if (state !== this.previous) {
      this.dispatch({ type: 'state_changed', runId, at: Date.now(), state, previous: this.previous });
      this.previous = state;
    }
    if (this.terminal !== undefined) {
      const last = this.terminal;
      this.terminal = undefined;
      this.dispatch(last);
    } else if (!this.emitted) {
      return;
    }
    this.emitted = false;
    const changedKeys = parts.hooks.has('onStateChange') ? changedKeysOf(this.written, snapshot.context) : [];
    this.written = snapshot.context;
    const persisted = persistedSnapshotOf(actor);
    parts.steps?.record(runId, persisted, this.dispatched);
    persist.snapshot({
      status: runStatusOf(snapshot),
      state,
      snapshot: persisted,
      labels: snapshot.context.labels,
      toolCallIds: this.toolCallIdsOf(snapshot.context.batch.pending),
    });
    if (changedKeys.length > 0) {
      // Queued above: the version is that of the write that holds this snapshot.
      const change = { changedKeys, version: () => versionOnceWritten(persist) };
      const info = runInfo(snapshot.context);
      parts.hooks.eachPlugin('onStateChange', (plugin) => plugin.onStateChange?.(change, info));
    }
    parts.durable.observed(handle, state, snapshot.status !== 'active');
    if (state.startsWith('awaiting')) handle.compact();
    if (snapshot.status !== 'active') {
      handle.close();
      handle.settle();
      // Until its last write is in, the store still shows an earlier step as running: the handle
      // stays the run's truth, so `resume` returns it and a recovery sweep does not restore the
      // stale row and run the step again.
      const forget = () => {
        if (parts.live.get(runId) === handle) parts.live.delete(runId);
      };
      handle.persisted().then(forget, forget);
    }
  }

  /**
   * {@link recordedCallIds} of the batch, made once per pending list: every tool result of a
   * batch is a snapshot, and listing the whole batch each time made a 4,000-call batch O(calls²)
   * (issue 36 item 5).
   */
  private toolCallIdsOf(pending: readonly PendingCall[]): string[] {
    if (pending !== this.idsFor) {
      this.idsFor = pending;
      this.ids = pending.length === 0 ? [] : recordedCallIds(pending);
    }
    return this.ids;
  }

  /**
   * An actor error (the actor's observer) is a bug in a step (ours or a plugin's), never a normal
   * ending; still, the run must end like any failed run: a `run_failed` event, a stored status, a
   * closed stream.
   */
  error(err: unknown): void {
    this.parts.onError(err, `run ${this.runId}`);
    this.terminal = { type: 'run_failed', runId: this.runId, at: Date.now(), error: runErrorOf(err) };
    this.next();
  }
}

/** Top-level keys whose value is not the same object as before (all of them for a new run). */
function changedKeysOf(before: object | undefined, after: object): string[] {
  if (before === undefined) return Object.keys(after);
  const was = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const changed = Object.keys(now).filter((key) => now[key] !== was[key]);
  for (const key of Object.keys(was)) if (!(key in now)) changed.push(key);
  return changed;
}

/**
 * The store version once everything queued so far is written: `caughtUp` settles right after the
 * write that holds it, before the next write can start, so the version read then is that write's.
 */
function versionOnceWritten(persist: ReturnType<DurableRuns['track']>): Promise<number> {
  return persist.caughtUp().then(() => {
    const { version } = persist.status;
    if (version === undefined) throw new Error('the run was never written');
    return version;
  });
}

/** The `run_failed` error of an actor error: its name and message, never recoverable. */
function runErrorOf(err: unknown) {
  const { name, message } = ToolError.from(err);
  return { name: name === 'ToolError' ? 'RunError' : name, message, recoverable: false };
}

/**
 * What XState keeps of a started actor's options, settled (issue 29 item 3). XState 5 reads
 * `actor.options` only until `start()` returns (its input for the first snapshot and the start's
 * inspection event, `devTools`), yet keeps the object for the actor's life:
 * - with the input in it: the app's start messages and labels (for a continued session, its whole
 *   earlier transcript) stayed referenced beside the context's own copies while the run waits;
 * - built as `{ ...defaultOptions, ...options }`, which on Node 20's V8 (11.3) gives every such
 *   object a hidden class of its own (a spread followed by more members never shares one): ~0.25 KB
 *   of map and descriptors per actor, two actors per run.
 * The actor keeps instead a copy without the input, made by `Object.assign`, whose hidden class
 * all runs share. The same members and values otherwise: nothing XState reads changes.
 */
function settleActorOptions(actor: unknown): void {
  const holder = actor as { options?: Record<string, unknown> };
  if (holder.options === undefined) return;
  const settled = Object.assign({}, holder.options);
  settled.input = undefined;
  holder.options = settled;
}

/**
 * The calls a written snapshot records as runnable (`whenRecorded`: a tool runs only once its
 * call is in the store): the admitted ones. A call proposed or waiting for approval is left out:
 * it runs once a snapshot that holds its admission (its approval) is stored, so an approval the
 * store never got (a store failing mid-answer) holds the call instead of running it (issue 35 item 5).
 */
function recordedCallIds(pending: readonly { toolCallId: string; status: string }[]): string[] {
  const ids: string[] = [];
  for (const call of pending) if (call.status === 'admitted') ids.push(call.toolCallId);
  return ids;
}
