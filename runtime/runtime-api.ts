/**
 * Step 5 of `createRuntime` (handle): the object the app holds. Start, resume, answer, cancel,
 * list and close runs, read their event logs, and the tool catalog.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { createActor, type InspectionEvent } from 'xstate';
import { type RunAwaiting, runAwaitingOf } from '../machines/run-awaiting.ts';
import type { InDoubtResolution, RememberedApproval, RunContext } from '../machines/run-context.ts';
import type { RunMachine } from '../machines/run-machine.ts';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import type { Caps } from '../run/caps.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { RunEventRecord, RunListFilter, RunStore, StoredRun } from '../stores/run-store.ts';
import { RunNotFoundError } from '../stores/run-store-errors.ts';
import type { JSONSchema, Tool } from '../tools/define-tool.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import { sessionStart } from './continue-session.ts';
import type { DurableRuns, RunEventsOptions } from './durable/durable-runs.ts';
import type { RecoveredRuns, RecoverOptions, Recovery } from './durable/recover-runs.ts';
import { readableContext } from './durable/snapshot-migration.ts';
import type { HostRun } from './host-run.ts';
import {
  ForkError,
  type ForkOptions,
  type ForkPreview,
  forkRun,
  previewFork,
  type RunVariant,
} from './run-fork.ts';
import type { ProvidedToolResult, RunHandle } from './run-handle.ts';
import type { LiveRuns, ProvidedRunMachine } from './runtime-deps.ts';
import type { RuntimeSettings, StartOptions } from './runtime-options.ts';
import type { PluginHooks } from './runtime-plugins.ts';
import { startInputOf } from './start-input.ts';
import type { StepHistory } from './step-history.ts';
import type { RunDeps } from './steps/run-deps.ts';

/** What the runtime object is built over: the results of the earlier steps. */
export interface RuntimeParts {
  settings: RuntimeSettings;
  /** The run machine of a {@link RunVariant}, with the steps' dependencies it was built over. */
  variant: (overrides: RunVariant) => { machine: ProvidedRunMachine; deps: RunDeps };
  store: RunStore;
  durable: DurableRuns;
  recovery: Recovery;
  live: LiveRuns;
  machine: ProvidedRunMachine;
  policies: PolicyRunner;
  inspect: ((event: InspectionEvent) => void) | undefined;
  hooks: PluginHooks;
  host: HostRun;
  /** The live handle of a run, or the run restored from the store (`runtime.resume`). */
  resume: (runId: string) => Promise<RunHandle>;
  /** Each step's snapshot of recent runs, when forks are on (`forks`). */
  steps?: StepHistory;
}

/**
 * What {@link createRuntime} returns: start, resume, answer, list and close runs (docs/architecture.md).
 * A named interface, so hovers and the API reference show these members, not the run machine's type.
 */
export interface CoreRuntime {
  /** The run machine with this runtime's actors provided (for diagrams and inspectors). */
  readonly machine: RunMachine;
  /** The runtime's tools and its plugins' tools (docs/tool-boundary.md). */
  readonly catalog: ToolCatalog;
  /** Where runs are persisted (`memoryStore()` unless the `store` option gave one). */
  readonly store: RunStore;
  /** The runtime's caps: each run's are clamped to them. */
  readonly caps: Caps;
  /** This runtime's name as the owner of the runs it hosts (docs/durability.md §Guarantees (leases); `durable.owner`). */
  readonly owner: string;
  /**
   * This runtime instance's lease holder, `<owner>#<12 hex digits>`, unique per `createRuntime`:
   * what the store records as the `owner` of a run this runtime holds (docs/durability.md §Guarantees).
   */
  readonly instance: string;
  /**
   * Starts a run; its first events are replayed to any `events$` subscriber.
   *
   * @throws StartOptionsError for a run id or session id that is empty, holds NUL or a lone
   *   surrogate, or is over the store's `maxRunIdBytes` (512 UTF-8 bytes), and for labels that are
   *   not a plain object of strings or are named `__proto__`/`constructor`: nothing is started.
   *   ZodError for invalid caps; PolicyError when a start policy refuses the run.
   */
  start(start: StartOptions): RunHandle;
  /**
   * The live handle of a run, or the run restored from the store (after a restart, or after it
   * was evicted) and claimed for this runtime. The snapshot's deadlines are timestamps, so waits
   * resume where they were; a tool call that was in flight runs again with the same `toolCallId`.
   *
   * @throws RunNotFoundError when the store has no such run; RunConflictError while another
   *   owner (process) holds it.
   */
  resume(runId: string): Promise<RunHandle>;
  /**
   * Restores the stored runs nobody is advancing (docs/durability.md §Recovery): those this owner
   * left running (a restart under the same `durable.owner`) and released ones; with
   * `takeover: 'lapsed'`, also other owners' whose lease ran out. Runs awaiting an answer stay
   * in the store (an answer by id restores them). One pass; `durable: { recover }` runs it at start.
   */
  recover(options?: RecoverOptions): Promise<RecoveredRuns>;
  /**
   * Starts a new run from the step of run `runId` at its event `atEvent` (its `seq` in
   * `runtime.events(runId)`), optionally with an edited tool input or a clarification answer
   * (run-fork.ts): a new run id, linked to its parent by labels and a `run_forked` event in
   * both logs. Needs `forks` (on with the inspector).
   *
   * @throws ForkError when forks are off, the step is not kept, or the edit does not fit.
   */
  fork(runId: string, options: ForkOptions): Promise<RunHandle>;
  /**
   * What `fork(runId, options)` would do, without running it (run-fork.ts §Preview): which calls
   * a recorded replay would answer from the parent's record, which would execute, which it would
   * not run again because their outcome is unknown. The planner is asked for the turns the
   * replay cannot reuse; no tool executes, nothing is stored.
   *
   * @throws ForkError as `fork` does.
   */
  forkPreview(runId: string, options: ForkOptions): Promise<ForkPreview>;
  /**
   * Answers a run's clarification by id, restoring the run from the store first when it is
   * not live here (evicted, or after a restart). Resolves with the run's handle.
   *
   * @throws RunNotFoundError, RunConflictError (another owner holds it), RunAnswerError.
   */
  provideClarification(runId: string, answer: { id: string; answer: string }): Promise<RunHandle>;
  /** Results of a run's external tool calls, by run id (see `provideClarification`). */
  provideToolResults(runId: string, results: ProvidedToolResult[]): Promise<RunHandle>;
  /**
   * Approves or denies what a run awaits confirmation for, by run id (see `provideClarification`);
   * `edits` (toolCallId → input) approves with edits (docs/policies.md §Approve with edits).
   */
  confirm(runId: string, answer: Parameters<RunHandle['confirm']>[0]): Promise<RunHandle>;
  /**
   * Resolves the calls a run holds in doubt (`awaiting.kind === 'in_doubt'`: started, their end
   * never recorded, their tool neither re-runnable nor reconciled; docs/durability.md §Effects), by
   * run id, restoring the run first when it is not live here. See `RunHandle.resolveInDoubt`.
   *
   * @throws RunNotFoundError, RunConflictError (another owner holds it), RunAnswerError.
   */
  resolveInDoubt(runId: string, resolutions: Record<string, InDoubtResolution>): Promise<RunHandle>;
  /** Cancels a run by id, restoring it first when it is not live here. */
  cancel(runId: string, reason?: string): Promise<RunHandle>;
  /**
   * Resolves when everything every hosted run (or run `runId`) emitted so far is in the store.
   *
   * @throws RunPersistenceError while the store fails (writes are retried); RunConflictError.
   */
  flush(runId?: string): Promise<void>;
  /**
   * A run's event log, from the store: every event after `afterSeq`, then, unless
   * `follow: false`, each new one as it is written, until the run's final event. Works for
   * runs hosted here, elsewhere, or finished; `seq` numbers resume a dropped stream.
   */
  events(runId: string, options?: RunEventsOptions): AsyncGenerator<RunEventRecord<RunEvent>>;
  /**
   * Stops hosting runs: waits for writes in flight, stops every live actor, releases the runs
   * and ends this runtime's lease, so another process can resume them at once. The store is
   * not closed (it is the app's); nor are plugins (the public `createRuntime` closes the inspector
   * its `inspector` option started, so nothing keeps the process alive).
   */
  close(): Promise<void>;
  /** The live handle of a run in this process, if any. */
  get(runId: string): RunHandle | undefined;
  /**
   * Runs in the store, most recently updated first, each with what it waits for (`awaiting`),
   * read from its snapshot: no run is restored, so a desk of approvals across runs, evictions and
   * restarts lists every waiting run of the store (issue 35 item 6). `awaiting` keeps the runs that
   * wait for that kind (`'confirmation'`, `'clarification'`, `'external_tools'`, `'backoff'`, several
   * in an array, or `true` for any); answering one (`runtime.confirm(runId, …)`) restores it as needed.
   */
  list(filter?: RuntimeListFilter): Promise<StoredRun[]>;
  /** One run from the store with what it waits for (`awaiting`), or `undefined`; it is not restored. */
  load(runId: string): Promise<StoredRun | undefined>;
  /**
   * Starts the next run of a conversation (docs/threads.md): the new run begins with the
   * transcript of the session's latest finished run, from the store, followed by `messages`.
   * The first run of a session starts from `messages` alone. Works across restarts and
   * processes sharing a durable store.
   *
   * @throws SessionBusyError while a run of the session is still running or awaiting (answer
   *   or cancel it first: a conversation has one run at a time).
   */
  continueSession(sessionId: string, start: Omit<StartOptions, 'sessionId'>): Promise<RunHandle>;
  /**
   * A run's remembered approvals (docs/policies.md §Sticky approvals), oldest first: from the live
   * run here, else from its stored snapshot (not restored). Each has the `id` `revokeApproval` takes.
   *
   * @throws RunNotFoundError when the store has no such run.
   */
  approvals(runId: string): Promise<readonly RememberedApproval[]>;
  /**
   * Forgets a remembered approval of run `runId` (its calls ask again), restoring the run first
   * when it is not live here; an `approval_revoked` event records it (with `by`).
   *
   * @throws RunNotFoundError, RunConflictError (another owner holds it), RunAnswerError (no such
   *   approval, or the run has ended).
   */
  revokeApproval(runId: string, approvalId: string, options?: { by?: string }): Promise<RunHandle>;
  /** The tool catalog (docs/tool-boundary.md). */
  listTools(): Tool[];
  toolSpec(id: string): Tool | undefined;
  toolSchema(id: string): JSONSchema | undefined;
  /** The `tool_schemas.json` export in Goa-AI's shape, `service` being the agent id (docs/mcp.md §Catalog). */
  toolSchemas(): ReturnType<ToolCatalog['schemas']>;
}

/** The runtime the app holds (see `createRuntime`); its members are documented on {@link Runtime}. */
export function runtimeApi(parts: RuntimeParts): CoreRuntime {
  const { settings, store, durable, live, machine, resume } = parts;
  const { catalog, ceilings, agent } = settings;
  const runtime: CoreRuntime = {
    machine,
    catalog,
    store,
    caps: ceilings,
    owner: durable.owner,
    instance: durable.instance,

    start: (start: StartOptions): RunHandle => startRun(parts, start),

    resume,

    fork(runId: string, options: ForkOptions): Promise<RunHandle> {
      if (!parts.steps) return Promise.reject(new ForkError('forks are off: createRuntime({ forks: true })'));
      return forkRun(parts, parts.steps, runId, options);
    },

    forkPreview(runId: string, options: ForkOptions): Promise<ForkPreview> {
      if (!parts.steps) return Promise.reject(new ForkError('forks are off: createRuntime({ forks: true })'));
      return previewFork(parts, parts.steps, runId, options);
    },

    recover(recoverOptions?: RecoverOptions): Promise<RecoveredRuns> {
      return parts.recovery.recover(recoverOptions);
    },

    async provideClarification(runId: string, answer: { id: string; answer: string }): Promise<RunHandle> {
      const run = await resume(runId);
      await run.provideClarification(answer);
      return run;
    },

    async provideToolResults(runId: string, results: ProvidedToolResult[]): Promise<RunHandle> {
      const run = await resume(runId);
      await run.provideToolResults(results);
      return run;
    },

    async confirm(runId: string, answer: Parameters<RunHandle['confirm']>[0]): Promise<RunHandle> {
      const run = await resume(runId);
      await run.confirm(answer);
      return run;
    },

    async resolveInDoubt(runId: string, resolutions: Record<string, InDoubtResolution>): Promise<RunHandle> {
      const run = await resume(runId);
      await run.resolveInDoubt(resolutions);
      return run;
    },

    async cancel(runId: string, reason?: string): Promise<RunHandle> {
      const run = await resume(runId);
      run.cancel(reason);
      return run;
    },

    flush(runId?: string): Promise<void> {
      return durable.flush(runId);
    },

    events(runId: string, options?: RunEventsOptions): AsyncGenerator<RunEventRecord<RunEvent>> {
      return durable.events(runId, options);
    },

    async close(): Promise<void> {
      parts.recovery.close();
      await durable.close(() => {
        const hosted = [...live.keys()];
        for (const handle of live.values()) handle.actor.stop();
        live.clear();
        return hosted;
      });
    },

    get(runId: string): RunHandle | undefined {
      return live.get(runId);
    },

    async list(filter?: RuntimeListFilter): Promise<StoredRun[]> {
      if (filter?.awaiting === undefined) return (await store.list(filter)).map(withAwaiting);
      const { awaiting, limit, ...rest } = filter;
      const kinds = awaitingKinds(awaiting);
      // Only runs the store has as awaiting can wait for something; the kind is in the snapshot.
      const status =
        rest.status === undefined ? 'awaiting' : [rest.status].flat().filter((s) => s === 'awaiting');
      if (Array.isArray(status) && status.length === 0) return [];
      const out: StoredRun[] = [];
      for (const stored of await store.list({ ...rest, status })) {
        const run = withAwaiting(stored);
        if (run.awaiting && (kinds === undefined || kinds.has(run.awaiting.kind))) out.push(run);
        if (limit !== undefined && out.length >= limit) break;
      }
      return out;
    },

    async load(runId: string): Promise<StoredRun | undefined> {
      const stored = await store.load(runId);
      return stored && withAwaiting(stored);
    },

    async continueSession(sessionId: string, start: Omit<StartOptions, 'sessionId'>): Promise<RunHandle> {
      // The thread's remembered approvals go on with it (docs/policies.md §Sticky approvals).
      const { messages, approvals } = await sessionStart(store, sessionId);
      return startRun(parts, { ...start, sessionId, messages: [...messages, ...start.messages] }, approvals);
    },

    async approvals(runId: string): Promise<readonly RememberedApproval[]> {
      const here = live.get(runId);
      if (here) return here.approvals;
      const stored = await store.load(runId);
      if (stored === undefined) throw new RunNotFoundError(runId);
      return readableContext<RunContext>(stored.snapshot)?.flow.approvals ?? [];
    },

    async revokeApproval(runId: string, approvalId: string, options?: { by?: string }): Promise<RunHandle> {
      const run = await resume(runId);
      await run.revokeApproval(approvalId, options);
      return run;
    },

    listTools(): Tool[] {
      return catalog.list();
    },
    toolSpec(id: string): Tool | undefined {
      return catalog.get(id);
    },
    toolSchema(id: string): JSONSchema | undefined {
      return catalog.get(id)?.inputSchema;
    },
    toolSchemas() {
      return catalog.schemas(agent.id);
    },
  };
  return runtime;
}

/** What `runtime.list` takes: the store's filter, and what the runs wait for. */
export interface RuntimeListFilter extends RunListFilter {
  /** Only runs waiting for this (one kind, several, or `true`: anything); implies `status: 'awaiting'`. */
  awaiting?: RunAwaiting['kind'] | RunAwaiting['kind'][] | true;
}

const AWAITING_KINDS: readonly RunAwaiting['kind'][] = [
  'clarification',
  'external_tools',
  'confirmation',
  'backoff',
];

/** The kinds an `awaiting` filter keeps (`undefined`: any). @throws TypeError for an unknown kind. */
function awaitingKinds(awaiting: NonNullable<RuntimeListFilter['awaiting']>): Set<string> | undefined {
  if (awaiting === true) return undefined;
  const kinds = [awaiting].flat();
  for (const kind of kinds) {
    if (!AWAITING_KINDS.includes(kind)) {
      throw new TypeError(
        `runtime.list: awaiting "${String(kind)}" is not one of ${AWAITING_KINDS.join(', ')} (or true)`,
      );
    }
  }
  return new Set(kinds);
}

/** A stored run with what it waits for, read from its snapshot. */
/** `runtime.start`, and `continueSession` with its thread's remembered approvals. */
function startRun(parts: RuntimeParts, start: StartOptions, approvals?: RememberedApproval[]): RunHandle {
  const { settings, store, live, machine, inspect, host } = parts;
  const runId = start.runId ?? randomUUID();
  if (live.has(runId)) throw new Error(`Run ${runId} is already live`);
  const { input, decisions } = startInputOf(
    runId,
    start,
    {
      agent: settings.agent,
      ceilings: settings.ceilings,
      policies: parts.policies,
      maxRunIdBytes: store.maxRunIdBytes,
    },
    (info) => parts.hooks.notifyRunStart(info, 'start'),
  );
  const actor = createActor(machine, {
    input: approvals === undefined || approvals.length === 0 ? input : { ...input, approvals },
    inspect,
  });
  return host(actor, undefined, 'start', decisions);
}

function withAwaiting(stored: StoredRun): StoredRun {
  // A snapshot this release cannot read (a newer release's) awaits nothing it could answer.
  return { ...stored, awaiting: runAwaitingOf(readableContext<RunContext>(stored.snapshot)) };
}
