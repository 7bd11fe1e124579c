import { randomUUID } from 'node:crypto';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import type { RunInput } from '../machines/run-context.ts';
import { type RunActorRef, runMachine, validateCallsAction } from '../machines/run-machine.ts';
import type { Plugin, RunInfo } from '../plugins/define-plugin.ts';
import type { Policy } from '../policies/define-policy.ts';
import { createPolicyEngine } from '../policies/policy-engine.ts';
import { NO_EFFECTS } from '../policies/policy-effects.ts';
import { noPolicies, type PolicyRunner } from '../policies/policy-runner.ts';
import {
  TELEMETRY_PLUGIN_NAME,
  type TelemetryPluginOptions,
  telemetryPlugin,
} from '../telemetry/telemetry-plugin.ts';
import type { JSONSchema, Tool } from '../tools/define-tool.ts';
import type { ParseLimits } from '../tools/parse-arguments.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { type Caps, CapsSchema, DEFAULT_CAPS } from './caps.ts';
import type { Message } from './message.ts';
import type { Planner } from './planner.ts';
import type { PolicyDecisionRecord, RunEvent } from './run-events.ts';
import { RunHandle, runStatusOf, stateName } from './run-handle.ts';
import { createExecuteToolActor } from './steps/execute-tool.ts';
import { createPlanActor } from './steps/plan-step.ts';
import { createReviewResultsActor } from './steps/review-results.ts';
import type { RunDeps } from './steps/run-deps.ts';
import { createValidateBatchActor, validateCalls } from './steps/validate-batch.ts';
import { memoryStore } from './stores/memory-store.ts';
import type { RunListFilter, RunStore, StoredRun } from './stores/run-store.ts';

type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** What `createRuntime` takes (SPEC §4). */
export interface RuntimeOptions {
  agent: { id: string; name?: string };
  planner: Planner;
  tools?: Tool[];
  plugins?: Plugin[];
  /** Configured ceilings; each run may lower them, policies may only tighten them. */
  caps?: Partial<Caps>;
  /**
   * Policies (SPEC §5), consulted in this order, then each plugin's in plugin order. Built into the
   * policy engine (`createPolicyEngine`) over this runtime's tools.
   */
  policies?: Policy[];
  /** A policy engine of your own instead of `policies` (the port the run machine calls). */
  policyRunner?: PolicyRunner;
  /** Where runs are persisted at every step boundary. Default: in memory. */
  store?: RunStore;
  /** An XState inspection observer that reaches every actor (e.g. `@statelyai/inspect`). */
  inspect?: InspectObserver;
  /** Timeout for tools that declare none, in ms. Default 60 000. */
  defaultToolTimeoutMs?: number;
  /** Limits on tool arguments (bytes, nesting depth). */
  limits?: ParseLimits;
  /** Time the finalizing turn gets past the time budget, in ms. Default 30 000. */
  finalizeGraceMs?: number;
  /** Where errors the runtime cannot hand to a caller go (a store write failing, a plugin hook throwing). */
  onError?: (error: unknown, where: string) => void;
  /**
   * Traces and metrics (SPEC §6) through `@opentelemetry/api`, by the telemetry plugin installed
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

/** Thrown by `runtime.resume` for a run the store does not hold. */
export class RunNotFoundError extends Error {
  override readonly name = 'RunNotFoundError';
}

export type Runtime = ReturnType<typeof createRuntime>;

/**
 * Creates the runtime that hosts runs (SPEC §4): one XState actor per run, persisted at every
 * step boundary in `store`, with events on `run.events$` and answers through the run handle.
 *
 * @throws ToolDefinitionError when two tools share an id; ZodError for invalid caps.
 */
export function createRuntime(options: RuntimeOptions) {
  const plugins = withTelemetry(options.plugins ?? [], options.telemetry);
  const catalog = new ToolCatalog([
    ...(options.tools ?? []),
    ...plugins.flatMap((plugin) => plugin.tools ?? []),
  ]);
  const ceilings = CapsSchema.parse({ ...DEFAULT_CAPS, ...options.caps });
  const store = options.store ?? memoryStore();
  const onError = options.onError ?? ((error, where) => console.error(`[toolwarden] ${where}:`, error));
  const live = new Map<string, RunHandle>();
  const agent = { id: options.agent.id, name: options.agent.name ?? options.agent.id };

  const deps: RunDeps = {
    catalog,
    planner: options.planner,
    policies: policyRunnerOf(options, plugins, catalog),
    plugins,
    defaultToolTimeoutMs: options.defaultToolTimeoutMs,
    limits: options.limits,
    finalizeGraceMs: options.finalizeGraceMs ?? 30_000,
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
      plan: createPlanActor(deps),
      validateBatch: createValidateBatchActor(deps),
      executeTool: createExecuteToolActor(deps, infoOf),
      reviewResults: createReviewResultsActor(deps),
    },
    actions: { validateCalls: validateCallsAction((context) => validateCalls(deps, context, NO_EFFECTS)) },
    // Without policies, validating and resuming invoke no actor (see runActors).
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
    const handle = new RunHandle(actor, catalog);
    const runId = handle.runId;
    live.set(runId, handle);
    const persist = persister(store, runId, stored, onError);
    const dispatch = (event: RunEvent) => {
      handle.publish(event);
      persist.event(event);
      const info = runInfoOf(actor);
      for (const plugin of plugins) {
        if (!plugin.onEvent) continue;
        try {
          plugin.onEvent(event, info);
        } catch (err) {
          onError(err, `plugin ${plugin.name} onEvent`);
        }
      }
    };
    actor.on('*', (event) => dispatch(event as RunEvent));
    let previous: string | undefined;
    const observe = () => {
      const snapshot = actor.getSnapshot();
      const state = stateName(snapshot);
      if (state === previous) return;
      dispatch({ type: 'state_changed', runId, at: Date.now(), state, previous });
      previous = state;
      persist.snapshot(runStatusOf(snapshot), actor.getPersistedSnapshot());
      if (snapshot.status !== 'active') {
        live.delete(runId);
        handle.close();
      }
    };
    actor.subscribe({ next: observe, error: (err) => onError(err, `run ${runId}`) });
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
    }
    actor.start();
    observe();
    return handle;
  }

  return {
    /** The run machine with this runtime's actors provided (for diagrams and inspectors). */
    machine,
    catalog,
    store,
    caps: ceilings,

    /** Starts a run; its first events are replayed to any `events$` subscriber. */
    start(start: StartOptions): RunHandle {
      const runId = start.runId ?? randomUUID();
      if (live.has(runId)) throw new Error(`Run ${runId} is already live`);
      const caps = CapsSchema.parse({ ...ceilings, ...start.caps });
      for (const key of Object.keys(caps) as (keyof Caps)[]) caps[key] = Math.min(caps[key], ceilings[key]);
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
      for (const plugin of plugins) plugin.onRunStart?.(info, 'start');
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

    /**
     * The live handle of a run, or the run restored from the store (after a restart, or after
     * it was evicted). The snapshot's deadlines are timestamps, so waits resume where they were.
     *
     * @throws RunNotFoundError when the store has no such run.
     */
    async resume(runId: string): Promise<RunHandle> {
      const existing = live.get(runId);
      if (existing) return existing;
      const stored = await store.load(runId);
      if (!stored) throw new RunNotFoundError(`No run ${runId} in the store`);
      // `input` is ignored when a snapshot is given; the type asks for it all the same.
      const actor = createActor(machine, {
        snapshot: stored.snapshot as never,
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
      for (const plugin of plugins) plugin.onRunStart?.(info, 'resume');
      return host(actor, stored, 'resume');
    },

    /** The live handle of a run in this process, if any. */
    get(runId: string): RunHandle | undefined {
      return live.get(runId);
    },

    /** Runs in the store, newest first. */
    list(filter?: RunListFilter): Promise<StoredRun[]> {
      return store.list(filter);
    },

    /** The tool catalog (SPEC §9). */
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

/**
 * Serializes one run's store writes: the snapshot at every state change (optimistic version
 * check) and its events, in order, without blocking the actor.
 */
function persister(
  store: RunStore,
  runId: string,
  stored: StoredRun | undefined,
  onError: (error: unknown, where: string) => void,
) {
  let version = stored?.version;
  let chain: Promise<unknown> = Promise.resolve();
  let events: { event: unknown; at: number }[] = [];
  const enqueue = (work: () => Promise<unknown>, where: string) => {
    chain = chain.then(work).catch((err) => onError(err, where));
  };
  return {
    snapshot(status: StoredRun['status'], snapshot: unknown) {
      const copy = snapshot;
      enqueue(async () => {
        if (version === undefined) {
          const context = (
            copy as { context: { agent: { id: string }; sessionId?: string; labels: Record<string, string> } }
          ).context;
          const created = await store.create({
            runId,
            agentId: context.agent.id,
            sessionId: context.sessionId,
            labels: context.labels,
            status,
            snapshot: copy,
          });
          version = created.version;
        } else {
          version = (await store.save(runId, { expectedVersion: version, status, snapshot: copy })).version;
        }
        await flushEvents();
      }, `store save of run ${runId}`);
    },
    event(event: RunEvent) {
      events.push({ event, at: event.at });
    },
  };
  async function flushEvents() {
    if (events.length === 0) return;
    const batch = events;
    events = [];
    await store.appendEvents(runId, batch);
  }
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
