import { randomUUID } from 'node:crypto';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import { type InspectorPluginOptions, inspectorPlugin } from '../inspector/inspector-plugin.ts';
import { persistedSnapshotOf } from '../machines/persisted-snapshot.ts';
import type { RunContext, RunInput } from '../machines/run-context.ts';
import { type RunActorRef, runMachine, validateCallsAction } from '../machines/run-machine.ts';
import { runSteps } from '../machines/run-steps.ts';
import type { Plugin, RunInfo } from '../plugins/define-plugin.ts';
import type { Policy } from '../policies/define-policy.ts';
import { createPolicyEngine } from '../policies/policy-engine.ts';
import { noPolicies, type PolicyRunner } from '../policies/policy-runner.ts';
import { type Caps, CapsSchema, DEFAULT_CAPS } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { Planner } from '../run/planner.ts';
import { NO_EFFECTS } from '../run/policy-effects.ts';
import type { PolicyDecisionRecord, RunEvent } from '../run/run-events.ts';
import {
  TELEMETRY_PLUGIN_NAME,
  type TelemetryPluginOptions,
  telemetryPlugin,
} from '../telemetry/telemetry-plugin.ts';
import type { JSONSchema, Tool } from '../tools/define-tool.ts';
import type { ParseLimits } from '../tools/parse-arguments.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { ToolError } from '../tools/tool-error.ts';
import { sessionTranscript } from './continue-session.ts';
import { createDurableRuns, type DurableOptions, type RunEventsOptions } from './durable/durable-runs.ts';
import { unpackSnapshot } from './durable/snapshot-codec.ts';
import { runAwaitingOf } from './run-awaiting.ts';
import { type ProvidedToolResult, RunHandle, runStatusOf, stateName } from './run-handle.ts';
import { createExecuteToolPort } from './steps/execute-tool.ts';
import { createPlanPort } from './steps/plan-step.ts';
import { createReviewResultsPort } from './steps/review-results.ts';
import type { RunDeps } from './steps/run-deps.ts';
import { createValidateBatchPort, validateCalls } from './steps/validate-batch.ts';
import { memoryStore } from './stores/memory-store.ts';
import type { RunEventRecord, RunListFilter, RunStore, StoredRun } from './stores/run-store.ts';

/** Events that end a run; each run's event log ends with one of them. */
const TERMINAL_EVENTS = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_canceled']);

type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** What `createRuntime` takes (docs/architecture.md). */
export interface RuntimeOptions {
  agent: { id: string; name?: string };
  planner: Planner;
  tools?: Tool[];
  plugins?: Plugin[];
  /** Configured ceilings; each run may lower them, policies may only tighten them. */
  caps?: Partial<Caps>;
  /**
   * Policies (docs/policies.md), consulted in this order, then each plugin's in plugin order. Built into the
   * policy engine (`createPolicyEngine`) over this runtime's tools.
   */
  policies?: Policy[];
  /** A policy engine of your own instead of `policies` (the port the run machine calls). */
  policyRunner?: PolicyRunner;
  /**
   * Where runs are persisted at every step boundary (docs/durability.md). Default: in memory
   * (`memoryStore()`); `sqliteStore({ path })` makes runs survive a restart, `postgresStore` lets
   * several processes share them.
   */
  store?: RunStore;
  /** Leases, eviction of waiting runs, write retries (runtime/durable). */
  durable?: DurableOptions;
  /** An XState inspection observer that reaches every actor (e.g. `@statelyai/inspect`). */
  inspect?: InspectObserver;
  /**
   * Serve the live inspector page (issue 8): `true`, or `{ port }` and the other
   * `inspectorPlugin` options. Off by default, and then no inspection observer is installed.
   * The server's URL: `await runtime.inspector?.start()`.
   */
  inspector?: boolean | InspectorPluginOptions;
  /** Timeout for tools that declare none, in ms. Default 60 000. */
  defaultToolTimeoutMs?: number;
  /** Limits on tool arguments (bytes, nesting depth). */
  limits?: ParseLimits;
  /** Time the finalizing turn gets past the time budget, in ms. Default 30 000. */
  finalizeGraceMs?: number;
  /** Where errors the runtime cannot hand to a caller go (a store write failing, a plugin hook throwing). */
  onError?: (error: unknown, where: string) => void;
  /**
   * Traces and metrics (docs/telemetry.md) through `@opentelemetry/api`, by the telemetry plugin installed
   * first (outermost) unless `plugins` has one: on by default, a no-op until an SDK is registered;
   * `false` turns it off.
   */
  telemetry?: TelemetryPluginOptions | false;
}

/** What `runtime.start` takes. */
export interface StartOptions {
  runId?: string;
  sessionId?: string;
  messages: Message[];
  labels?: Record<string, string>;
  /** Per-run caps: never above the runtime's. */
  caps?: Partial<Caps>;
  /** Tools the app disables for this run; no policy can enable them. */
  disabledTools?: string[];
}

/** Thrown by `runtime.resume` (and the by-id answers) for a run the store does not hold. */
export { RunNotFoundError } from './stores/run-store-errors.ts';

/** What {@link createRuntime} returns: start, resume, answer, list and close runs. */
export type Runtime = ReturnType<typeof createRuntime>;

/**
 * Creates the runtime that hosts runs (docs/architecture.md): one XState actor per run, persisted at every
 * step boundary in `store`, with events on `run.events$` and answers through the run handle.
 *
 * @throws ToolDefinitionError when two tools share an id; ZodError for invalid caps.
 */
export function createRuntime(options: RuntimeOptions) {
  const inspector = options.inspector
    ? inspectorPlugin(options.inspector === true ? {} : options.inspector)
    : undefined;
  const plugins = [
    ...withTelemetry(options.plugins ?? [], options.telemetry),
    ...(inspector ? [inspector] : []),
  ];
  const catalog = new ToolCatalog([
    ...(options.tools ?? []),
    ...plugins.flatMap((plugin) => plugin.tools ?? []),
  ]);
  const ceilings = CapsSchema.parse({ ...DEFAULT_CAPS, ...options.caps });
  const store = options.store ?? memoryStore();
  const onError = options.onError ?? ((error, where) => console.error(`[toolwarden] ${where}:`, error));
  const live = new Map<string, RunHandle>();
  const agent = { id: options.agent.id, name: options.agent.name ?? options.agent.id };
  const durable = createDurableRuns({
    store,
    options: options.durable,
    onError,
    forget: (runId) => live.delete(runId),
    resume,
  });

  const deps: RunDeps = {
    catalog,
    planner: options.planner,
    policies: policyRunnerOf(options, plugins, catalog),
    plugins,
    defaultToolTimeoutMs: options.defaultToolTimeoutMs,
    limits: options.limits,
    finalizeGraceMs: options.finalizeGraceMs ?? 30_000,
    // Deltas go to the run's events$ only, live: they are many, and only a UI watching wants them.
    publishDelta: (runId, turnId, delta) =>
      live.get(runId)?.publishLive({ ...delta, runId, turnId, at: Date.now() }),
  };
  const infoOf = (runId: string): RunInfo => {
    const context = live.get(runId)?.context;
    return {
      runId,
      agent,
      sessionId: context?.sessionId,
      labels: context?.labels ?? {},
      traceContext: context?.traceContext ?? null,
    };
  };
  const machine = runMachine.provide({
    actors: {
      runSteps: runSteps({
        plan: createPlanPort(deps),
        validateBatch: createValidateBatchPort(deps),
        // Innermost wrapper: a tool executes only once its call is in the store (write-ahead).
        executeTool: createExecuteToolPort({ ...deps, plugins: [...plugins, durable.toolGate] }, infoOf),
        reviewResults: createReviewResultsPort(deps),
      }),
    },
    actions: { validateCalls: validateCallsAction((context) => validateCalls(deps, context, NO_EFFECTS)) },
    // Without policies, validating and resuming request nothing of `steps` (see run-ports.ts).
    guards: { consultsPolicies: () => deps.policies !== noPolicies },
  });
  const inspectors = [options.inspect, ...plugins.map((plugin) => plugin.inspect)].filter(
    (observer): observer is InspectObserver => observer !== undefined,
  );
  const inspect =
    inspectors.length === 0
      ? undefined
      : (event: InspectionEvent) => {
          for (const observer of inspectors) {
            try {
              if (typeof observer === 'function') observer(event);
              else observer.next?.(event);
            } catch (err) {
              onError(err, 'inspection observer');
            }
          }
        };

  /** Wires a started or restored actor to its handle, plugins and store. */
  function host(
    actor: RunActorRef,
    stored: StoredRun | undefined,
    how: 'start' | 'resume',
    startDecisions: PolicyDecisionRecord[] = [],
  ): RunHandle {
    const runId = actor.getSnapshot().context.runId;
    if (actor.getSnapshot().status !== 'active') {
      // A finished run restored from the store: nothing to host or write, only its outcome.
      const handle = new RunHandle(actor, catalog);
      actor.start();
      handle.close();
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
    const dispatch = (event: RunEvent) => {
      handle.publish(event);
      persist.event(event);
      emitted = true;
      const info = runInfoOf(actor);
      eachPlugin('onEvent', (plugin) => plugin.onEvent?.(event, info));
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
      persist.snapshot({
        status: runStatusOf(snapshot),
        state,
        snapshot: persistedSnapshotOf(actor),
        labels: snapshot.context.labels,
        toolCallIds: snapshot.context.batch.pending.map((call) => call.toolCallId),
      });
      durable.observed(handle, state, snapshot.status !== 'active');
      if (snapshot.status !== 'active') {
        live.delete(runId);
        handle.close();
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
  }

  const runtime = {
    /** The run machine with this runtime's actors provided (for diagrams and inspectors). */
    machine,
    /** The inspector plugin when the `inspector` option is set: `start()` gives its URL, `close()` stops it. */
    inspector,
    catalog,
    store,
    caps: ceilings,
    /** This runtime's name as the owner of the runs it hosts (docs/durability.md §Guarantees (leases); `durable.owner`). */
    owner: durable.owner,

    /** Starts a run; its first events are replayed to any `events$` subscriber. */
    start(start: StartOptions): RunHandle {
      const runId = start.runId ?? randomUUID();
      if (live.has(runId)) throw new Error(`Run ${runId} is already live`);
      const caps = CapsSchema.parse({ ...ceilings, ...start.caps });
      for (const key of Object.keys(caps) as (keyof Caps)[]) {
        const limit = Math.min(
          caps[key] ?? Number.POSITIVE_INFINITY,
          ceilings[key] ?? Number.POSITIVE_INFINITY,
        );
        if (Number.isFinite(limit)) caps[key] = limit;
      }
      if (ceilings.maxTotalTokens !== undefined)
        caps.maxTotalTokens = Math.min(
          caps.maxTotalTokens ?? Number.POSITIVE_INFINITY,
          ceilings.maxTotalTokens,
        );
      const startedAt = Date.now();
      const appDisabled = Object.fromEntries((start.disabledTools ?? []).map((id) => [id, 'app']));
      // Policies first: their disabled tools are never advertised. Throws PolicyError (fail closed).
      const initial = deps.policies.onRunStart?.({
        runId,
        agent,
        sessionId: start.sessionId,
        labels: start.labels ?? {},
        caps,
        disabledTools: appDisabled,
        startedAt,
      });
      const info: RunInfo = {
        runId,
        agent,
        sessionId: start.sessionId,
        labels: initial?.labels ?? start.labels ?? {},
        traceContext: null,
      };
      notifyRunStart(info, 'start');
      const input: RunInput = {
        runId,
        agent,
        sessionId: start.sessionId,
        labels: info.labels,
        messages: start.messages,
        caps: initial?.caps ?? caps,
        startedAt,
        disabledTools: initial?.disabledTools ?? appDisabled,
        traceContext: info.traceContext,
      };
      const actor = createActor(machine, { input, inspect });
      return host(actor, undefined, 'start', initial?.decisions);
    },

    resume,

    /**
     * Answers a run's clarification by id, restoring the run from the store first when it is
     * not live here (evicted, or after a restart). Resolves with the run's handle.
     *
     * @throws RunNotFoundError, RunConflictError (another owner holds it), RunAnswerError.
     */
    async provideClarification(runId: string, answer: { id: string; answer: string }): Promise<RunHandle> {
      const run = await resume(runId);
      await run.provideClarification(answer);
      return run;
    },

    /** Results of a run's external tool calls, by run id (see `provideClarification`). */
    async provideToolResults(runId: string, results: ProvidedToolResult[]): Promise<RunHandle> {
      const run = await resume(runId);
      await run.provideToolResults(results);
      return run;
    },

    /** Approves or denies what a run awaits confirmation for, by run id (see `provideClarification`). */
    async confirm(
      runId: string,
      answer: { id: string; approved: boolean; by?: string; reason?: string },
    ): Promise<RunHandle> {
      const run = await resume(runId);
      await run.confirm(answer);
      return run;
    },

    /** Cancels a run by id, restoring it first when it is not live here. */
    async cancel(runId: string, reason?: string): Promise<RunHandle> {
      const run = await resume(runId);
      run.cancel(reason);
      return run;
    },

    /**
     * Resolves when everything every hosted run (or run `runId`) emitted so far is in the store.
     *
     * @throws RunPersistenceError while the store fails (writes are retried); RunConflictError.
     */
    flush(runId?: string): Promise<void> {
      return durable.flush(runId);
    },

    /**
     * A run's event log, from the store: every event after `afterSeq`, then, unless
     * `follow: false`, each new one as it is written, until the run's final event. Works for
     * runs hosted here, elsewhere, or finished; `seq` numbers resume a dropped stream.
     */
    events(runId: string, options?: RunEventsOptions): AsyncGenerator<RunEventRecord<RunEvent>> {
      return durable.events(runId, options);
    },

    /**
     * Stops hosting runs: waits for writes in flight, stops every live actor, releases the runs
     * and ends this runtime's lease, so another process can resume them at once. The store is
     * not closed (it is the app's). The inspector server the `inspector` option started is
     * stopped too, so nothing keeps the process alive.
     */
    async close(): Promise<void> {
      await durable.close(() => {
        const hosted = [...live.keys()];
        for (const handle of live.values()) handle.actor.stop();
        live.clear();
        return hosted;
      });
      await inspector?.close();
    },

    /** The live handle of a run in this process, if any. */
    get(runId: string): RunHandle | undefined {
      return live.get(runId);
    },

    /** Runs in the store, most recently updated first, each with what it waits for (`awaiting`). */
    async list(filter?: RunListFilter): Promise<StoredRun[]> {
      return (await store.list(filter)).map(withAwaiting);
    },

    /** One run from the store with what it waits for (`awaiting`), or `undefined`; it is not restored. */
    async load(runId: string): Promise<StoredRun | undefined> {
      const stored = await store.load(runId);
      return stored && withAwaiting(stored);
    },

    /**
     * Starts the next run of a conversation (docs/threads.md): the new run begins with the
     * transcript of the session's latest finished run, from the store, followed by `messages`.
     * The first run of a session starts from `messages` alone. Works across restarts and
     * processes sharing a durable store.
     *
     * @throws SessionBusyError while a run of the session is still running or awaiting (answer
     *   or cancel it first: a conversation has one run at a time).
     */
    async continueSession(sessionId: string, start: Omit<StartOptions, 'sessionId'>): Promise<RunHandle> {
      const transcript = await sessionTranscript(store, sessionId);
      return runtime.start({ ...start, sessionId, messages: [...transcript, ...start.messages] });
    },

    /** The tool catalog (docs/tool-boundary.md). */
    listTools(): Tool[] {
      return catalog.list();
    },
    toolSpec(id: string): Tool | undefined {
      return catalog.get(id);
    },
    toolSchema(id: string): JSONSchema | undefined {
      return catalog.get(id)?.inputSchema;
    },
    /** The `tool_schemas.json` export. */
    toolSchemas() {
      return catalog.schemas();
    },
  };
  // Inspectors hosted here answer waiting runs through this runtime (the page's forms).
  for (const plugin of plugins)
    (plugin as { answerWith?: (answers: typeof runtime) => void }).answerWith?.(runtime);
  return runtime;

  /**
   * The live handle of a run, or the run restored from the store (after a restart, or after it
   * was evicted) and claimed for this runtime. The snapshot's deadlines are timestamps, so waits
   * resume where they were; a tool call that was in flight runs again with the same `toolCallId`.
   *
   * @throws RunNotFoundError when the store has no such run; RunConflictError while another
   *   owner (process) holds it.
   */
  async function resume(runId: string): Promise<RunHandle> {
    const existing = live.get(runId);
    if (existing) return existing;
    return durable.restore(runId, (stored) => {
      const started = live.get(runId);
      if (started) return started;
      // `input` is ignored when a snapshot is given; the type asks for it all the same.
      const actor = createActor(machine, {
        snapshot: unpackSnapshot(stored.snapshot) as never,
        inspect,
        input: undefined as never,
      });
      const context = actor.getSnapshot().context;
      const info: RunInfo = {
        runId,
        agent,
        sessionId: context.sessionId,
        labels: context.labels,
        traceContext: context.traceContext,
      };
      notifyRunStart(info, 'resume');
      return host(actor, stored, 'resume');
    });
  }

  /** Plugins' `onRunStart` hooks, each isolated: a throw is reported and the run starts all the same. */
  function notifyRunStart(info: RunInfo, how: 'start' | 'resume'): void {
    eachPlugin('onRunStart', (plugin) => plugin.onRunStart?.(info, how));
  }

  /** Calls `hook` on every plugin that has it; a throw is reported (`onError`) and the next goes on. */
  function eachPlugin(hook: 'onEvent' | 'onRunStart', call: (plugin: Plugin) => void): void {
    for (const plugin of plugins) {
      if (!plugin[hook]) continue;
      try {
        call(plugin);
      } catch (err) {
        onError(err, `plugin ${plugin.name} ${hook}`);
      }
    }
  }

  function runErrorOf(err: unknown) {
    const { name, message } = ToolError.from(err);
    return { name: name === 'ToolError' ? 'RunError' : name, message, recoverable: false };
  }

  function runInfoOf(actor: RunActorRef): RunInfo {
    const context = actor.getSnapshot().context;
    return {
      runId: context.runId,
      agent: context.agent,
      sessionId: context.sessionId,
      labels: context.labels,
      traceContext: context.traceContext,
    };
  }
}

/** The app's plugins, after the telemetry plugin unless telemetry is off or the app placed one itself. */
function withTelemetry(plugins: Plugin[], telemetry: TelemetryPluginOptions | false | undefined): Plugin[] {
  if (telemetry === false || plugins.some((plugin) => plugin.name === TELEMETRY_PLUGIN_NAME)) return plugins;
  return [telemetryPlugin(telemetry), ...plugins];
}

/** The runtime's policy port: its own runner, or the engine over its and its plugins' policies. */
function policyRunnerOf(options: RuntimeOptions, plugins: Plugin[], catalog: ToolCatalog): PolicyRunner {
  const policies = [...(options.policies ?? []), ...plugins.flatMap((plugin) => plugin.policies ?? [])];
  if (options.policyRunner) {
    if (policies.length > 0)
      throw new TypeError(
        'Give createRuntime either `policies` (and plugin policies) or `policyRunner`, not both',
      );
    return options.policyRunner;
  }
  return policies.length > 0 ? createPolicyEngine({ policies, tools: catalog }) : noPolicies;
}

/** A stored run with what it waits for, read from its snapshot. */
function withAwaiting(stored: StoredRun): StoredRun {
  const snapshot = unpackSnapshot(stored.snapshot) as { context?: RunContext } | undefined;
  return { ...stored, awaiting: runAwaitingOf(snapshot?.context) };
}
