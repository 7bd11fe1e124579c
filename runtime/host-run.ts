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
import type { RunActorRef } from '../machines/run-machine.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import type { PolicyDecisionRecord, RunEvent } from '../run/run-events.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import { ToolError } from '../tools/tool-error.ts';
import type { DurableRuns } from './durable/durable-runs.ts';
import type { StepHistory } from './run-fork.ts';
import { RunHandle, runStatusOf, stateName } from './run-handle.ts';
import type { LiveRuns } from './runtime-deps.ts';
import type { OnRuntimeError } from './runtime-options.ts';
import type { PluginHooks } from './runtime-plugins.ts';
import { runInfo } from './steps/run-deps.ts';
import type { StoredRun } from './stores/run-store.ts';

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
export function createRunHost({
  agent,
  catalog,
  live,
  durable,
  hooks,
  onError,
  steps,
}: RunHostParts): HostRun {
  return function host(actor, stored, how, startDecisions = []) {
    const runId = actor.getSnapshot().context.runId;
    if (actor.getSnapshot().status !== 'active') {
      // A finished run restored from the store: nothing to host or write, only its outcome.
      const handle = new RunHandle(actor, catalog);
      actor.start();
      handle.close();
      handle.settle();
      return handle;
    }
    // A restored run that was evicted here keeps the handle the app may still hold.
    const kept = how === 'resume' ? durable.suspended(runId) : undefined;
    const handle = kept?.rebind(actor) ?? new RunHandle(actor, catalog);
    live.set(runId, handle);
    const persist = durable.track(handle, {
      stored,
      agentId: agent.id,
      sessionId: actor.getSnapshot().context.sessionId,
    });
    let emitted = false;
    let dispatched = 0;
    const onEvent = hooks.has('onEvent');
    const dispatch = (emittedEvent: RunEvent) => {
      dispatched++;
      // The store's copy when it keeps one in memory: the handle replays that same object.
      const event = persist.event(emittedEvent);
      handle.publish(event);
      emitted = true;
      if (!onEvent) return;
      const { context, status } = actor.getSnapshot();
      const info = runInfo(context);
      hooks.eachPlugin('onEvent', (plugin) => plugin.onEvent?.(event, info));
      // A plugin gave the run a new trace context (the telemetry plugin: its latest segment, which
      // a segment after a restart links): kept in the context, so stored with the next write.
      if (info.traceContext !== context.traceContext && info.traceContext && status === 'active') {
        actor.send({ type: 'trace.context', traceContext: info.traceContext });
      }
    };
    // The run's last event is its terminal one (run_completed, run_failed, run_canceled): it is
    // held until the state_changed into the final state is out (issue 12, defect 9).
    let terminal: RunEvent | undefined;
    actor.on('*', (event) => {
      if (TERMINAL_EVENTS.has((event as RunEvent).type)) terminal = event as RunEvent;
      else dispatch(event as RunEvent);
    });
    // A restored run already logged the state it is in: only a change is a new state_changed.
    let previous: string | undefined = how === 'resume' ? stateName(actor.getSnapshot()) : undefined;
    // The context of the last snapshot written (a restored one counts: a restore changes nothing).
    let written: object | undefined = how === 'resume' ? actor.getSnapshot().context : undefined;
    // Persisted at every step boundary (a new state), and whenever a step emitted events without
    // changing state (a tool result while the rest of the batch runs): nothing emitted is only in memory.
    const observe = () => {
      const snapshot = actor.getSnapshot();
      const state = stateName(snapshot);
      if (state !== previous) {
        dispatch({ type: 'state_changed', runId, at: Date.now(), state, previous });
        previous = state;
      }
      if (terminal !== undefined) {
        const last = terminal;
        terminal = undefined;
        dispatch(last);
      } else if (!emitted) {
        return;
      }
      emitted = false;
      const changedKeys = hooks.has('onStateChange') ? changedKeysOf(written, snapshot.context) : [];
      written = snapshot.context;
      const persisted = persistedSnapshotOf(actor);
      steps?.record(runId, persisted, dispatched);
      persist.snapshot({
        status: runStatusOf(snapshot),
        state,
        snapshot: persisted,
        labels: snapshot.context.labels,
        toolCallIds: snapshot.context.batch.pending.map((call) => call.toolCallId),
      });
      if (changedKeys.length > 0) {
        // Queued above: the version is that of the write that holds this snapshot.
        const change = { changedKeys, version: () => versionOnceWritten(persist) };
        const info = runInfo(snapshot.context);
        hooks.eachPlugin('onStateChange', (plugin) => plugin.onStateChange?.(change, info));
      }
      durable.observed(handle, state, snapshot.status !== 'active');
      if (snapshot.status !== 'active') {
        handle.close();
        handle.settle();
        // Until its last write is in, the store still shows an earlier step as running: the handle
        // stays the run's truth, so `resume` returns it and a recovery sweep does not restore the
        // stale row and run the step again.
        const forget = () => {
          if (live.get(runId) === handle) live.delete(runId);
        };
        handle.persisted().then(forget, forget);
      }
    };
    // An actor error is a bug in a step (ours or a plugin's), never a normal ending; still, the
    // run must end like any failed run: a `run_failed` event, a stored status, a closed stream.
    const crashed = (err: unknown) => {
      onError(err, `run ${runId}`);
      terminal = { type: 'run_failed', runId, at: Date.now(), error: runErrorOf(err) };
      observe();
    };
    actor.subscribe({ next: observe, error: crashed });
    const context = actor.getSnapshot().context;
    if (how === 'start') {
      dispatch({
        type: 'run_started',
        runId,
        at: Date.now(),
        agentId: agent.id,
        sessionId: context.sessionId,
        labels: context.labels,
      });
      for (const decision of startDecisions) {
        dispatch({ type: 'policy_decision', runId, at: Date.now(), turnId: `${runId}:t0`, decision });
      }
    } else {
      // The restore is marked by its own event, not by logging the saved state again. Being an
      // event, it also makes the first observe write the run, which records the tool calls in
      // flight for the write-ahead gate (they wait for it).
      dispatch({
        type: 'run_resumed',
        runId,
        at: Date.now(),
        state: stateName(actor.getSnapshot()),
        owner: durable.owner,
      });
    }
    actor.start();
    observe();
    return handle;
  };
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
