import type { AnyActorRef, InspectionEvent } from 'xstate';
import { edgeIdOf } from '../machines/diagram/edge-id.ts';
import type { GraphModel } from '../machines/diagram/graph-model.ts';
import type { RunEvent } from '../run/run-events.ts';
import { activeStateIds } from './active-states.ts';
import { inferTransition } from './infer-transition.ts';
import { defaultSanitize, type Sanitize } from './sanitize.ts';

/** Where a run's inspection events came from. */
export type RunSource = 'native' | 'stately';

/**
 * One line of a run's event log: a RunEvent (native runs), or an event sent to the actor and a
 * state change (runs seen through `@statelyai/inspect`, which has no RunEvents).
 */
export interface LogEntry {
  /** Increases by one per entry of the store, across runs: the order things were seen. */
  seq: number;
  /**
   * Its number in its run's log, from 1, counting entries dropped past `maxLog`: for a native run,
   * the run's own event seq (`runtime.events(runId)`, `runtime.fork(runId, { atEvent })`).
   */
  n: number;
  at: number;
  kind: 'run_event' | 'xstate_event' | 'state';
  /** `run_started`, `await_clarification`, … ; the event type for `xstate_event`; `state_changed`. */
  type: string;
  /** The sanitized payload. */
  data: unknown;
}

/**
 * What the runs list shows of a run: everything but its context and log, a few hundred bytes
 * (sent over SSE in the `hello` page and as `run` messages, then as `update` deltas).
 */
export interface RunSummary {
  /** Unique in the store: the runId, unless two sources report the same run. */
  key: string;
  runId: string;
  source: RunSource;
  machineId: string;
  agentId?: string;
  /** The run's labels (`run_started`), for the list's filter. */
  labels?: Record<string, string>;
  /** `running`, `awaiting`, `completed`, `failed`, `canceled` (or `done`/`error` for other machines). */
  status: string;
  startedAt: number;
  updatedAt: number;
  /** Active state ids, ancestors first: `['run', 'run.awaiting', 'run.awaiting.clarification']`. */
  activeStates: string[];
  /** The edges the last macrostep took, in order (several when it passed transient states). */
  lastTransition: { edgeIds: string[]; event: string; at: number } | null;
  logSize: number;
  /** Log entries dropped to respect `maxLog`. */
  dropped: number;
  /** Why a run ended other than completing as planned: failed, canceled, or finalized by a cap. */
  outcome?: RunOutcome;
  /** The session (thread) the run belongs to (`run_started.sessionId`). */
  sessionId?: string;
  /** When it completed, failed or was canceled, ms since the epoch (its duration: `endedAt - startedAt`). */
  endedAt?: number;
  /** Tokens its planner turns reported (`planner_turn.usage`), summed. */
  tokens?: { input: number; output: number };
  /** What its planner turns cost (`planner_turn.cost`, when a cost policy reports it), summed. */
  cost?: { amount: number; currency: string };
  /** Forks (`runtime.fork`): the run this one was forked from, at which of its events; the runs forked from this one. */
  fork?: { parent?: { runId: string; atEvent: number }; children?: string[] };
}

/**
 * Why a run did not simply complete (issue 27 item 2), shown at the top of its pane: the cause,
 * the error's name, and the step where it happened.
 */
export interface RunOutcome {
  /** `failed`; `canceled`; `capped` (a cap or the time budget made it finalize: `tool_cap`, `failure_cap`, `time_budget`); `finalized` (a policy did). */
  kind: 'failed' | 'canceled' | 'capped' | 'finalized';
  /** The error's name (`run_failed`): `QuotaExceededError`, `PolicyError`, … */
  errorName?: string;
  /** The error's message, the cancel reason, or the finalize reason. */
  message: string;
  /** The error's causes, outermost first, as `Name: message`. */
  causes?: string[];
  /** The state the run left for `failed`, `canceled` or `finalizing` (`planning`, `executing`, …). */
  step?: string;
  /** The planner turn it was in: `<runId>:t<n>`. */
  turnId?: string;
  /** The event of that transition (`plan.error`, `cancel`, …). */
  event?: string;
}

/** A run with its sanitized context (`InspectionStore.run`, `GET /api/runs/:key`). */
export interface RunView extends RunSummary {
  /** The sanitized context of the latest snapshot. */
  context: unknown;
}

/** One page of the runs list, newest first (`InspectionStore.page`, the SSE `hello`, `GET /api/runs`). */
export interface RunPage {
  runs: RunSummary[];
  /** Runs in the store. */
  total: number;
  /** Runs matching the query (all pages). */
  matched: number;
  /** Runs in the store by status. */
  counts: Record<string, number>;
  /** Pass as `before` for the next page; null on the last one. */
  next: string | null;
}

/** Which page of runs: newest first, filtered by status and by text (run id, agent, labels). */
export interface RunQuery {
  /** Default 100, at most 500. */
  limit?: number;
  /** A page's `next`: the runs listed after it. */
  before?: string | null;
  status?: string;
  text?: string;
}

/**
 * What listeners get. Every listener gets `run` (a run first listed, whole), `update` (only the
 * summary fields that changed) and `removed`; `log` and `context` only concern the listeners
 * watching that run ({@link InspectionStore.watch}), and are made only while one does.
 */
export type InspectorMessage =
  | { type: 'run'; run: RunSummary }
  | { type: 'update'; key: string; changes: Partial<RunSummary> }
  | { type: 'log'; key: string; entry: LogEntry }
  | { type: 'context'; key: string; context: unknown }
  | { type: 'removed'; key: string };

export interface InspectionStoreOptions {
  /** The chart the page draws; transitions are matched to its edge ids. */
  graph: GraphModel;
  /** Applied to every context and payload before it is shown. Default {@link defaultSanitize}. */
  sanitize?: Sanitize;
  /** Runs kept, live and recent; the oldest finished ones go first. Default 100. */
  maxRuns?: number;
  /** Log entries kept per run. Default 1000. */
  maxLog?: number;
  /** Snapshots kept per run for time travel (`frameAt`). Default 200. */
  maxFrames?: number;
  now?: () => number;
}

/** A run as it was after one of its snapshots (time travel: `InspectionStore.frameAt`). */
export interface RunFrame {
  /** The log's `seq` when the snapshot was taken: the frame of a log entry is the last one at or before it. */
  seq: number;
  at: number;
  activeStates: string[];
  lastTransition: RunView['lastTransition'];
  /** Sanitized. */
  context: unknown;
}

interface RunRecord {
  view: Omit<RunSummary, 'logSize' | 'dropped'>;
  /** Creation order: ties of `startedAt` are listed newest created first. */
  order: number;
  /** The summary last sent to listeners: `update` messages carry what differs from it. */
  published?: RunSummary;
  log: LogEntry[];
  dropped: number;
  context: unknown;
  cleanContext?: { of: unknown; value: unknown };
  pendingEdges: string[];
  /** Snapshots for time travel, oldest first; contexts raw (immutable, shared with the actor). */
  frames: RunFrame[];
  /** Where the run was when it entered `failed`, `canceled` or `finalizing` (the outcome's step). */
  endStep?: { step: string; turnId?: string; event: string };
  /** What the run's last RunEvent said of its end. */
  ending?: Omit<RunOutcome, 'step' | 'turnId' | 'event'>;
}

const FINAL_STATUSES = new Set(['completed', 'failed', 'canceled', 'done', 'error', 'stopped']);

/**
 * The inspector's memory (issue 8 §3): runs seen through XState inspection events (native, from
 * the runtime's observer, or from `@statelyai/inspect` over WebSocket) and RunEvents, with their
 * active states, the transition just taken and their event log; listeners (the page's SSE
 * streams) get every change as an {@link InspectorMessage}.
 *
 * Work per inspection event is a type check for all but root `@xstate.microstep` and
 * `@xstate.snapshot` events; payloads are sanitized only when someone listens or reads.
 */
export class InspectionStore {
  readonly graph: GraphModel;
  private readonly sanitize: Sanitize;
  private readonly maxRuns: number;
  private readonly maxLog: number;
  private readonly maxFrames: number;
  private readonly now: () => number;
  private readonly records = new Map<string, RunRecord>();
  private readonly actorKeys = new WeakMap<object, string>();
  private readonly remoteKeys = new Map<string, string>();
  private readonly listeners = new Set<(message: InspectorMessage) => void>();
  /** Run key → listeners watching it (they get its `log` and `context` messages). */
  private readonly watchers = new Map<string, number>();
  private seq = 0;
  private anonymous = 0;
  private created = 0;

  constructor(options: InspectionStoreOptions) {
    this.graph = options.graph;
    this.sanitize = options.sanitize ?? defaultSanitize;
    this.maxRuns = options.maxRuns ?? 100;
    this.maxLog = options.maxLog ?? 1000;
    this.maxFrames = options.maxFrames ?? 200;
    this.now = options.now ?? Date.now;
  }

  /** An XState inspection observer: pass as `createActor(m, { inspect: (e) => store.observe(e) })`. */
  observe(event: InspectionEvent): void {
    if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
    const actor = event.actorRef as AnyActorRef;
    if (event.rootId !== actor.sessionId) return;
    const snapshot = event.snapshot as { value?: unknown; context?: unknown; status?: string };
    const key = this.actorKeys.get(actor) ?? this.registerActor(actor, snapshot.context);
    const record = this.records.get(key);
    if (!record) return;
    if (event.type === '@xstate.microstep') {
      for (const transition of event._transitions) record.pendingEdges.push(edgeIdOf(transition));
      return;
    }
    this.applySnapshot(record, snapshot, event.event.type, record.pendingEdges);
    record.pendingEdges = [];
  }

  /** A RunEvent of a native run (the plugin's `onEvent`). */
  recordRunEvent(event: RunEvent, agentId?: string): void {
    const record =
      this.records.get(event.runId) ?? this.create(event.runId, event.runId, 'native', this.graph.machineId);
    if (event.type === 'run_started') {
      record.view.agentId = event.agentId;
      // Events read back from a store or another process may predate labels.
      if (event.labels && Object.keys(event.labels).length > 0) record.view.labels = event.labels;
      if (event.sessionId) record.view.sessionId = event.sessionId;
      record.view.startedAt = Math.min(record.view.startedAt, event.at);
    } else if (agentId && !record.view.agentId) {
      record.view.agentId = agentId;
    }
    if (event.type === 'planner_turn') this.countTurn(record, event);
    if (event.type === 'run_forked') {
      const fork = { ...record.view.fork };
      if (event.childRunId === event.runId)
        fork.parent = { runId: event.parentRunId, atEvent: event.atEvent };
      else fork.children = [...(fork.children ?? []), event.childRunId];
      record.view.fork = fork;
      this.publishRun(record);
    }
    if (event.type === 'run_completed') {
      record.view.status = 'completed';
      const reason = event.finalizeReason;
      if (reason) {
        const capped = reason === 'tool_cap' || reason === 'failure_cap' || reason === 'time_budget';
        record.ending = { kind: capped ? 'capped' : 'finalized', message: reason };
      }
    }
    if (event.type === 'run_failed') {
      record.view.status = 'failed';
      const causes: string[] = [];
      for (let cause = event.error.cause; cause && causes.length < 5; cause = cause.cause)
        causes.push(`${cause.name}: ${cause.message}`);
      record.ending = {
        kind: 'failed',
        errorName: event.error.name,
        message: event.error.message,
        ...(causes.length > 0 ? { causes } : {}),
      };
    }
    if (event.type === 'run_canceled') {
      record.view.status = 'canceled';
      record.ending = { kind: 'canceled', message: event.reason ?? 'canceled' };
    }
    if (FINAL_STATUSES.has(record.view.status)) record.view.endedAt ??= event.at;
    // The run is listed (and its status settled) before its entry arrives.
    if (event.type === 'run_started' || FINAL_STATUSES.has(record.view.status)) this.publishRun(record);
    this.append(record, { at: event.at, kind: 'run_event', type: event.type, raw: event });
  }

  /** A planner turn's tokens and cost, added to the run's (shown in the list). */
  private countTurn(record: RunRecord, event: Extract<RunEvent, { type: 'planner_turn' }>): void {
    const view = record.view;
    const usage = event.usage;
    if (usage) {
      view.tokens = {
        input: (view.tokens?.input ?? 0) + (Number(usage.inputTokens) || 0),
        output: (view.tokens?.output ?? 0) + (Number(usage.outputTokens) || 0),
      };
    }
    // A cost policy's spend for the turn, when the event carries one (issue 35 item 2).
    const cost = (event as { cost?: { amount?: unknown; currency?: unknown } }).cost;
    if (cost && typeof cost.amount === 'number' && typeof cost.currency === 'string') {
      const same = view.cost?.currency === cost.currency;
      view.cost = { amount: (same ? view.cost!.amount : 0) + cost.amount, currency: cost.currency };
    }
    if (usage || cost) this.publishRun(record);
  }

  /**
   * One event from `@statelyai/inspect`'s WebSocket inspector (`@xstate.actor`,
   * `@xstate.snapshot`, `@xstate.event`, JSON-decoded). `connection` scopes its actor session
   * ids (`x:0`), which every actor system reuses.
   */
  receiveStately(message: unknown, connection: string): void {
    if (!message || typeof message !== 'object') return;
    const event = message as {
      type?: unknown;
      sessionId?: unknown;
      rootId?: unknown;
      parentId?: unknown;
      name?: unknown;
      snapshot?: { value?: unknown; context?: unknown; status?: string };
      event?: { type?: unknown };
    };
    if (typeof event.type !== 'string' || typeof event.sessionId !== 'string') return;
    const scoped = `${connection}/${event.sessionId}`;
    const isRoot = event.rootId === undefined || event.rootId === null || event.rootId === event.sessionId;
    if (event.type === '@xstate.actor') {
      if (!isRoot || event.parentId) return;
      // A new root actor: a new run even when the session id was seen before.
      const machineId = typeof event.name === 'string' ? event.name : 'machine';
      const key = this.newRemoteRun(scoped, machineId, event.snapshot?.context);
      const record = this.records.get(key)!;
      if (event.snapshot && event.snapshot.value !== undefined)
        this.applySnapshot(record, event.snapshot, 'xstate.init', []);
      return;
    }
    if (!isRoot) return;
    let key = this.remoteKeys.get(scoped);
    if (event.type === '@xstate.snapshot') {
      key ??= this.newRemoteRun(scoped, this.graph.machineId, event.snapshot?.context);
      const record = this.records.get(key);
      if (!record || !event.snapshot) return;
      const type = typeof event.event?.type === 'string' ? event.event.type : '';
      const before = record.view.activeStates;
      const after = activeStateIds(record.view.machineId, event.snapshot.value, this.graph);
      const edges =
        record.view.machineId === this.graph.machineId && before.length > 0
          ? inferTransition(this.graph, before, after, type)
          : [];
      const previous = leafName(before, record.view.machineId);
      this.applySnapshot(record, event.snapshot, type, edges);
      const state = leafName(record.view.activeStates, record.view.machineId);
      if (state !== previous) {
        this.append(record, {
          at: this.now(),
          kind: 'state',
          type: 'state_changed',
          raw: { state, previous },
        });
      }
      return;
    }
    if (event.type === '@xstate.event' && key) {
      const record = this.records.get(key);
      const inner = event.event as { type?: unknown } | undefined;
      if (!record || typeof inner?.type !== 'string') return;
      this.append(record, { at: this.now(), kind: 'xstate_event', type: inner.type, raw: inner });
    }
  }

  /** Every run with its context, newest first (sanitizes every context: prefer {@link page}). */
  runs(): RunView[] {
    return this.sorted().map((record) => this.viewOf(record));
  }

  /** `value` as the page may be sent it: the store's `sanitize` (bounded JSON, secret keys dropped). */
  sanitized(value: unknown): unknown {
    return this.sanitize(value);
  }

  /** A run with its sanitized context. */
  run(key: string): RunView | undefined {
    const record = this.records.get(key);
    return record ? this.viewOf(record) : undefined;
  }

  /** A run's summary: no context, no log. */
  /**
   * A run read back from the run store that is not hosted here, so the page can show and answer
   * it (the approval desk, issue 35 item 6: runs waiting from before a restart, or evicted):
   * its stored events become its log, then its stored snapshot (`value`, `context`, as
   * `migrateSnapshot` reads it) its state. Nothing happens for a run the store already has.
   *
   * @returns whether the run was added.
   */
  addStoredRun(
    run: { runId: string; agentId: string; snapshot: { value?: unknown; context?: unknown } },
    events: RunEvent[],
  ): boolean {
    if (this.records.has(run.runId)) return false;
    for (const event of events) this.recordRunEvent(event, run.agentId);
    const record =
      this.records.get(run.runId) ?? this.create(run.runId, run.runId, 'native', this.graph.machineId);
    this.applySnapshot(record, { ...run.snapshot, status: 'active' }, 'restored', []);
    return true;
  }

  summary(key: string): RunSummary | undefined {
    const record = this.records.get(key);
    return record ? summaryOf(record) : undefined;
  }

  /**
   * One page of run summaries, newest first (issue 27 item 1: what the page's first message
   * carries, so its size depends on `limit`, not on how many runs or how long their logs are).
   */
  page(query: RunQuery = {}): RunPage {
    const limit = Math.min(500, Math.max(1, Math.floor(query.limit ?? 100)));
    const counts: Record<string, number> = {};
    for (const record of this.records.values())
      counts[record.view.status] = (counts[record.view.status] ?? 0) + 1;
    const text = query.text?.trim().toLowerCase() ?? '';
    const matching = this.sorted().filter(
      (record) =>
        (!query.status || record.view.status === query.status) &&
        (text === '' || searchText(record.view).includes(text)),
    );
    const from = query.before ? matching.findIndex((record) => cursorOf(record) === query.before) + 1 : 0;
    const runs = matching.slice(from, from + limit);
    const last = runs.at(-1);
    return {
      runs: runs.map(summaryOf),
      total: this.records.size,
      matched: matching.length,
      counts,
      next: last && from + limit < matching.length ? cursorOf(last) : null,
    };
  }

  /**
   * Marks a run as watched until the returned function is called: while any listener watches
   * it, its new log entries and contexts are sanitized and sent as `log` and `context` messages.
   */
  watch(key: string): () => void {
    this.watchers.set(key, (this.watchers.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.watchers.get(key) ?? 1) - 1;
      if (left > 0) this.watchers.set(key, left);
      else this.watchers.delete(key);
    };
  }

  private sorted(): RunRecord[] {
    return [...this.records.values()].sort(
      (a, b) => b.view.startedAt - a.view.startedAt || b.order - a.order,
    );
  }

  /**
   * The `seq` a log entry of a native run has in the run's own event log (`runtime.events`):
   * its place among the run's RunEvents, entries dropped past `maxLog` counted. Undefined for
   * an entry not kept or not a RunEvent.
   */
  runEventSeq(key: string, seq: number): number | undefined {
    const record = this.records.get(key);
    if (record?.view.source !== 'native') return undefined;
    const index = record.log.findIndex((entry) => entry.seq === seq);
    return index < 0 || record.log[index]!.kind !== 'run_event' ? undefined : record.dropped + index + 1;
  }

  /** A run's log, oldest first (sanitized). */
  log(key: string): LogEntry[] {
    return [...(this.records.get(key)?.log ?? [])].map((entry) => this.cleanEntry(entry));
  }

  /**
   * A page of a run's log, oldest first (sanitized): its last `limit` entries before the entry
   * `before` (a seq; default: the newest), and how many it keeps before them (`earlier`).
   */
  logPage(key: string, query: { before?: number; limit: number }): { log: LogEntry[]; earlier: number } {
    const log = this.records.get(key)?.log ?? [];
    let end = log.length;
    if (query.before !== undefined) {
      // Seqs increase along a run's log: the first entry at or past `before`.
      let low = 0;
      while (low < end) {
        const mid = (low + end) >>> 1;
        if (log[mid]!.seq < query.before) low = mid + 1;
        else end = mid;
      }
    }
    const start = Math.max(0, end - Math.max(1, Math.floor(query.limit)));
    return { log: log.slice(start, end).map((entry) => this.cleanEntry(entry)), earlier: start };
  }

  /** Calls `listener` with every change until the returned function is called. */
  subscribe(listener: (message: InspectorMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  private registerActor(actor: AnyActorRef, context: unknown): string {
    const logicId = (actor as unknown as { logic?: { id?: unknown } }).logic?.id;
    const machineId = typeof logicId === 'string' ? logicId : this.graph.machineId;
    const runId = runIdOf(context) ?? `${machineId}-${++this.anonymous}`;
    const key = this.records.get(runId)?.view.source === 'stately' ? `${runId}@native` : runId;
    this.actorKeys.set(actor, key);
    if (!this.records.has(key)) this.create(key, runId, 'native', machineId);
    else this.records.get(key)!.view.machineId = machineId;
    return key;
  }

  private newRemoteRun(scoped: string, machineId: string, context: unknown): string {
    const runId = runIdOf(context) ?? `${machineId}-${++this.anonymous}`;
    const existing = this.records.get(runId);
    const key = existing && existing.view.source !== 'stately' ? `${runId}@ws` : runId;
    this.remoteKeys.set(scoped, key);
    if (!this.records.has(key)) this.create(key, runId, 'stately', machineId);
    return key;
  }

  private create(key: string, runId: string, source: RunSource, machineId: string): RunRecord {
    const at = this.now();
    const record: RunRecord = {
      view: {
        key,
        runId,
        source,
        machineId,
        status: 'running',
        startedAt: at,
        updatedAt: at,
        activeStates: [],
        lastTransition: null,
      },
      order: ++this.created,
      log: [],
      dropped: 0,
      context: undefined,
      pendingEdges: [],
      frames: [],
    };
    this.records.set(key, record);
    this.evict();
    return record;
  }

  private applySnapshot(
    record: RunRecord,
    snapshot: { value?: unknown; context?: unknown; status?: string },
    eventType: string,
    edges: string[],
  ): void {
    const view = record.view;
    const before = view.activeStates;
    view.activeStates = activeStateIds(view.machineId, snapshot.value, this.graph);
    const root = view.machineId;
    const ended = ['failed', 'canceled', 'finalizing'].find(
      (state) => view.activeStates.includes(`${root}.${state}`) && !before.includes(`${root}.${state}`),
    );
    if (ended && before.length > 0) {
      // The step a run failed in, or was canceled or capped in: the state it just left.
      const turn = (snapshot.context as { turn?: unknown } | undefined)?.turn;
      record.endStep = {
        step: leafName(before, root),
        event: eventType,
        ...(typeof turn === 'number' && turn > 0 ? { turnId: `${view.runId}:t${turn}` } : {}),
      };
    }
    if (edges.length > 0) view.lastTransition = { edgeIds: [...edges], event: eventType, at: this.now() };
    view.status = statusOf(view, snapshot.status);
    view.updatedAt = this.now();
    record.context = snapshot.context;
    record.frames.push({
      seq: this.seq,
      at: view.updatedAt,
      activeStates: view.activeStates,
      lastTransition: view.lastTransition,
      context: snapshot.context,
    });
    if (record.frames.length > this.maxFrames) record.frames.shift();
    this.publishRun(record);
    if (this.watchers.has(view.key))
      this.emit({ type: 'context', key: view.key, context: this.viewOf(record).context });
  }

  /**
   * The run as it was at log entry `seq`: its last snapshot taken at or before it (sanitized),
   * or undefined when none is kept that far back (`maxFrames`).
   */
  frameAt(key: string, seq: number): RunFrame | undefined {
    const frames = this.records.get(key)?.frames ?? [];
    let found: RunFrame | undefined;
    for (const frame of frames) {
      if (frame.seq > seq) break;
      found = frame;
    }
    return found && { ...found, context: found.context === undefined ? null : this.sanitize(found.context) };
  }

  private append(record: RunRecord, entry: Omit<LogEntry, 'seq' | 'n' | 'data'> & { raw: unknown }): void {
    const stored = {
      seq: ++this.seq,
      n: record.dropped + record.log.length + 1,
      at: entry.at,
      kind: entry.kind,
      type: entry.type,
      data: entry.raw,
      raw: true,
    };
    record.log.push(stored);
    if (record.log.length > this.maxLog) {
      record.log.shift();
      record.dropped++;
    }
    record.view.updatedAt = this.now();
    const key = record.view.key;
    if (this.listeners.size === 0 || !this.watchers.has(key)) return;
    this.emit({ type: 'log', key, entry: this.cleanEntry(stored) });
  }

  /** Sanitizes a stored entry once, in place (entries are stored raw until first shown). */
  private cleanEntry(entry: LogEntry & { raw?: boolean }): LogEntry {
    if (entry.raw) {
      entry.data = this.sanitize(entry.data);
      delete entry.raw;
    }
    return entry;
  }

  private viewOf(record: RunRecord): RunView {
    if (record.cleanContext?.of !== record.context || record.cleanContext === undefined) {
      record.cleanContext = {
        of: record.context,
        value: record.context === undefined ? null : this.sanitize(record.context),
      };
    }
    return {
      ...record.view,
      context: record.cleanContext.value,
      logSize: record.log.length,
      dropped: record.dropped,
    };
  }

  /** Tells listeners a run's summary: whole the first time, then only the fields that changed. */
  private publishRun(record: RunRecord): void {
    // Kept while nobody listens too (a shallow copy), so a page that connects later gets deltas.
    const summary = summaryOf(record);
    const before = record.published;
    record.published = summary;
    if (this.listeners.size === 0) return;
    if (!before) {
      this.emit({ type: 'run', run: summary });
      return;
    }
    const changes: Partial<RunSummary> = {};
    let changed = false;
    for (const field of Object.keys(summary) as (keyof RunSummary)[]) {
      if (field === 'updatedAt' || field === 'logSize') continue;
      if (!sameValue(summary[field], before[field])) {
        (changes as Record<string, unknown>)[field] = summary[field];
        changed = true;
      }
    }
    if (!changed) return;
    changes.updatedAt = summary.updatedAt;
    changes.logSize = summary.logSize;
    this.emit({ type: 'update', key: summary.key, changes });
  }

  private emit(message: InspectorMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch {
        // A broken listener (a closed stream) must not stop the others or the run.
      }
    }
  }

  private evict(): void {
    while (this.records.size > this.maxRuns) {
      // One pass, no sort (it sorted every run on every run started: 0.12 ms a run at maxRuns 1,000).
      let oldest: RunRecord | undefined;
      let oldestFinal: RunRecord | undefined;
      for (const record of this.records.values()) {
        if (!oldest || record.view.startedAt < oldest.view.startedAt) oldest = record;
        if (
          FINAL_STATUSES.has(record.view.status) &&
          (!oldestFinal || record.view.startedAt < oldestFinal.view.startedAt)
        )
          oldestFinal = record;
      }
      const victim = (oldestFinal ?? oldest)!;
      this.records.delete(victim.view.key);
      this.watchers.delete(victim.view.key);
      this.emit({ type: 'removed', key: victim.view.key });
    }
  }
}

function summaryOf(record: RunRecord): RunSummary {
  const summary: RunSummary = { ...record.view, logSize: record.log.length, dropped: record.dropped };
  if (record.ending) summary.outcome = { ...record.ending, ...record.endStep };
  return summary;
}

/** A page cursor: the run's start and creation order (stable while the run is kept). */
function cursorOf(record: RunRecord): string {
  return `${record.view.startedAt}.${record.order}`;
}

function searchText(view: RunRecord['view']): string {
  const labels = view.labels ? Object.entries(view.labels).map(([k, v]) => `${k}=${v}`) : [];
  const session = view.sessionId ? [`session=${view.sessionId}`] : [];
  return [view.runId, view.agentId ?? '', ...session, ...labels].join(' ').toLowerCase();
}

/** Equality for summary fields: primitives, arrays of strings, small JSON objects. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function runIdOf(context: unknown): string | undefined {
  const runId = (context as { runId?: unknown } | undefined)?.runId;
  return typeof runId === 'string' && runId.length > 0 ? runId : undefined;
}

/** `awaiting.clarification` from `['run', 'run.awaiting', 'run.awaiting.clarification']`. */
function leafName(active: readonly string[], machineId: string): string {
  const leaves = active.filter((id) => !active.some((other) => other.startsWith(`${id}.`)));
  return leaves.map((id) => (id.startsWith(`${machineId}.`) ? id.slice(machineId.length + 1) : id)).join(',');
}

/** A run machine's status words (`RunStatus`), else the actor's snapshot status. */
function statusOf(view: RunRecord['view'], status: string | undefined): string {
  const root = view.machineId;
  if (status === 'done') {
    const final = ['completed', 'failed', 'canceled'].find((key) =>
      view.activeStates.includes(`${root}.${key}`),
    );
    return final ?? 'done';
  }
  if (status === 'error') return 'failed';
  if (status === 'stopped') {
    if (FINAL_STATUSES.has(view.status)) return view.status;
    // Stopped while waiting for an answer: hibernated (durable.hibernateAfterMs) or the runtime
    // closed; it is still waiting in the store, and an answer restores it.
    return view.activeStates.includes(`${root}.awaiting`) ? 'awaiting' : 'stopped';
  }
  return view.activeStates.includes(`${root}.awaiting`) ? 'awaiting' : 'running';
}
