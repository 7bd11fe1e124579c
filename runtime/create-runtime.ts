/**
 * `createRuntime`: the runtime that hosts runs, built in named steps, each its own module:
 *
 * | step                    | module               | gives                                                        |
 * |-------------------------|----------------------|--------------------------------------------------------------|
 * | 1. options              | runtime-options.ts   | agent, plugins in hook order, tool catalog, caps, `onError`   |
 * | 2. stores and durability| durable/             | the store (default in memory), leases, write-ahead, eviction, recovery |
 * | 3. deps                 | runtime-deps.ts      | the steps' {@link RunDeps}, the provided run machine, inspection |
 * | 4. plugins              | runtime-plugins.ts   | plugin hooks, isolated; answerers get the runtime             |
 * | 5. handle               | host-run.ts, runtime-api.ts | hosting a run's actor; the object the app holds         |
 *
 * @module
 */

import { createActor } from 'xstate';
import { SNAPSHOT_FORMAT, snapshotFormatOf } from '../machines/snapshot-format.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import { warnOnPeerCopies } from '../run/peer-copies.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { createDurableRuns } from './durable/durable-runs.ts';
import { createRecovery } from './durable/recover-runs.ts';
import { migrateSnapshot, SnapshotMigrationError } from './durable/snapshot-migration.ts';
import { unmigratableRun } from './durable/unmigratable-run.ts';
import { createRunHost } from './host-run.ts';
import type { RunVariant } from './run-fork.ts';
import type { RunHandle } from './run-handle.ts';
import { type CoreRuntime, runtimeApi } from './runtime-api.ts';
import { createRunDeps, inspectionObserver, type LiveRuns, provideRunMachine } from './runtime-deps.ts';
import { type CoreRuntimeOptions, resolveRuntimeOptions } from './runtime-options.ts';
import { connectAnswerers, pluginHooks } from './runtime-plugins.ts';
import { StepHistory } from './step-history.ts';
import type { RunDeps } from './steps/run-deps.ts';

/** Thrown by `runtime.resume` (and the by-id answers) for a run the store does not hold. */
export { RunNotFoundError } from '../stores/run-store-errors.ts';
/** The core's names as most of the code reads them (the public ones, with `inspector`, are create-runtime.ts's at the root). */
export type { CoreRuntime, CoreRuntime as Runtime, RuntimeListFilter } from './runtime-api.ts';
export type {
  CoreRuntimeOptions,
  CoreRuntimeOptions as RuntimeOptions,
  InspectObserver,
  StartOptions,
} from './runtime-options.ts';

/**
 * Creates the runtime that hosts runs (docs/architecture.md): one XState actor per run, persisted at every
 * step boundary in `store`, with events on `run.events$` and answers through the run handle.
 *
 * @throws ToolDefinitionError when two tools share an id; ZodError for invalid caps.
 */
export function createRuntime(options: CoreRuntimeOptions): CoreRuntime {
  warnOnPeerCopies();
  const settings = resolveRuntimeOptions(options);
  const { agent, catalog, plugins, onError } = settings;
  const live: LiveRuns = new Map<string, RunHandle>();
  const store = options.store ?? memoryStore();
  const durable = createDurableRuns({
    store,
    options: options.durable,
    onError,
    forget: (runId) => live.delete(runId),
    resume,
  });
  const recovery = createRecovery({
    store,
    // The owner name, not this instance's lease holder: it says which stored runs are "mine" to
    // take back once the instance that held them (a crashed process) lost its lease.
    owner: durable.owner,
    leaseMs: options.durable?.leaseMs ?? 30_000,
    resume,
    isLive: (runId) => live.has(runId),
    wasFinishedAtClaim: (runId) => durable.wasFinishedAtClaim(runId),
    onError,
  });
  const deps: RunDeps = createRunDeps(options, settings, live);
  const machine = provideRunMachine(deps, durable.toolGate, settings, live);
  const inspect = inspectionObserver(options.inspect, plugins, onError);
  const hooks = pluginHooks(plugins, onError);
  const forks = options.forks ?? false;
  const steps = forks ? new StepHistory(forks === true ? 100 : forks.maxRuns) : undefined;
  const host = createRunHost({ agent, catalog, live, durable, hooks, onError, steps });
  /** The run machine with another planner, tools or policies, or wrapped ports (a fork's, run-fork.ts). */
  const variant = (overrides: RunVariant) => {
    const variantSettings = overrides.tools
      ? {
          ...settings,
          catalog: new ToolCatalog([...overrides.tools, ...plugins.flatMap((p) => p.tools ?? [])]),
        }
      : settings;
    const variantDeps = createRunDeps(
      {
        ...options,
        ...(overrides.planner ? { planner: overrides.planner } : {}),
        ...(overrides.policies ? { policies: overrides.policies, policyRunner: undefined } : {}),
      },
      variantSettings,
      live,
    );
    const wrap = overrides.wrapPorts;
    const machine = provideRunMachine(
      variantDeps,
      durable.toolGate,
      variantSettings,
      live,
      wrap && ((ports) => wrap(ports, variantDeps)),
    );
    return { machine, deps: variantDeps };
  };
  const runtime = runtimeApi({
    settings,
    variant,
    store,
    durable,
    recovery,
    live,
    machine,
    policies: deps.policies,
    inspect,
    hooks,
    host,
    resume,
    steps,
  });
  connectAnswerers(plugins, runtime);
  const recover = options.durable?.recover;
  if (recover) recovery.start(recover === true ? {} : recover);
  return runtime;

  /**
   * The live handle of a run, or the run restored from the store (after a restart, or after it
   * was evicted) and claimed for this runtime. The snapshot's deadlines are timestamps, so waits
   * resume where they were; a tool call that was in flight runs again with the same `toolCallId`.
   *
   * A snapshot an earlier release stored is migrated first (docs/durability.md §Upgrades); one
   * that cannot be gives a failed run with a SnapshotMigrationError (unmigratable-run.ts).
   *
   * @throws RunNotFoundError when the store has no such run; RunConflictError while another
   *   owner (process) holds it; SnapshotFormatTooNewError when a newer release stored it (the
   *   run is left as it is).
   */
  async function resume(runId: string): Promise<RunHandle> {
    const existing = live.get(runId);
    if (existing) return existing;
    return durable.restore(runId, (stored) => {
      const started = live.get(runId);
      if (started) return started;
      let actor: ReturnType<typeof createActor<typeof machine>>;
      try {
        const snapshot = migrateSnapshot(stored.snapshot, { runId });
        try {
          // `input` is ignored when a snapshot is given; the type asks for it all the same.
          actor = createActor(machine, { snapshot: snapshot as never, inspect, input: undefined as never });
        } catch (error) {
          // XState refuses it (a state this machine does not have): as unmigratable as a failed migrator.
          throw new SnapshotMigrationError({
            runId,
            fromVersion: snapshotFormatOf(stored.snapshot),
            toVersion: SNAPSHOT_FORMAT,
            failedAt: SNAPSHOT_FORMAT,
            reason: `the run machine cannot restore it: ${error instanceof Error ? error.message : String(error)}`,
            cause: error,
          });
        }
      } catch (error) {
        if (!(error instanceof SnapshotMigrationError)) throw error;
        const parts = {
          machine,
          agent,
          catalog,
          store,
          owner: durable.instance,
          caps: settings.ceilings,
          onError,
        };
        return unmigratableRun(parts, stored, error);
      }
      const context = actor.getSnapshot().context;
      const info: RunInfo = {
        runId,
        agent,
        sessionId: context.sessionId,
        labels: context.labels,
        traceContext: context.traceContext,
      };
      hooks.notifyRunStart(info, 'resume');
      return host(actor, stored, 'resume');
    });
  }
}
