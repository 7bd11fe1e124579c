/**
 * Argument checks shared by every RunStore, so that all of them reject the same bad input the
 * same way (`TypeError`/`RangeError`) before touching a database.
 *
 * @module
 */

import {
  type NewRun,
  type ReadEventsOptions,
  RUN_STATUSES,
  type RunListFilter,
  type RunStatus,
  type RunStore,
  type StoredRun,
} from './run-store.ts';

/** A list filter after checking: `statuses` is absent when any status matches. */
export interface CheckedRunListFilter {
  statuses?: RunStatus[];
  sessionId?: string;
  limit?: number;
}

/**
 * The longest run id (and session id) the built-in stores take, in UTF-8 bytes: PostgreSQL
 * indexes both (a btree entry holds at most ~2.7 KB), and one limit for all three stores keeps an
 * id valid when an app moves from one to another. A store may declare its own
 * ({@link RunStore.maxRunIdBytes}); `runtime.start()` checks against it.
 */
export const MAX_RUN_ID_BYTES = 512;

/** With the `u` flag a surrogate pair is one code point, so only a lone half matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * What makes `id` no storable run id (or session id), or `undefined` when it is one: not a
 * string, empty, a NUL character (SQLite's text functions end a string there, so `a\0x` and `a`
 * were one run; PostgreSQL's text refuses it), a lone UTF-16 surrogate (not UTF-8 encodable:
 * drivers replace it, and two ids became one), or over `maxBytes` UTF-8 bytes.
 */
export function idProblem(id: unknown, maxBytes: number = Number.POSITIVE_INFINITY): string | undefined {
  if (typeof id !== 'string') return `must be a string, got ${show(id)}`;
  if (id === '') return 'must not be empty';
  if (id.includes('\0')) return `must not contain NUL characters, got ${show(id.slice(0, 100))}`;
  if (LONE_SURROGATE.test(id)) return 'must be well-formed UTF-16 (it has a lone surrogate)';
  if (id.length > maxBytes / 3 && Buffer.byteLength(id, 'utf8') > maxBytes)
    return `must be at most ${maxBytes} UTF-8 bytes, got ${Buffer.byteLength(id, 'utf8')}`;
  return undefined;
}

/** A run id to read or write by: see {@link idProblem} (no length limit: ids stored before one existed are read). */
export function checkRunId(runId: unknown): string {
  const problem = idProblem(runId);
  if (problem !== undefined) throw new TypeError(`runId ${problem}`);
  return runId as string;
}

export function checkStatus(status: unknown): RunStatus {
  if (!RUN_STATUSES.includes(status as RunStatus)) {
    throw new TypeError(`status must be one of ${RUN_STATUSES.join(', ')}; got ${show(status)}`);
  }
  return status as RunStatus;
}

export function checkSnapshot(snapshot: unknown): void {
  if (snapshot === undefined) throw new TypeError('snapshot must be a JSON value, got undefined');
}

export function checkLabels(labels: unknown): Record<string, string> | undefined {
  if (labels === undefined) return undefined;
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    throw new TypeError(`labels must be an object of strings, got ${show(labels)}`);
  }
  const entries = labels as Record<string, unknown>;
  // A loop over keys, not Object.entries: a save checks the run's labels every step.
  for (const key of Object.keys(entries)) {
    const value = entries[key];
    if (typeof value !== 'string') throw new TypeError(`label "${key}" must be a string, got ${show(value)}`);
  }
  return labels as Record<string, string>;
}

export function checkNewRun(run: {
  runId: unknown;
  agentId: unknown;
  sessionId?: unknown;
  status: unknown;
  snapshot: unknown;
  labels?: unknown;
  owner?: unknown;
  events?: unknown;
}): void {
  const runIdProblem = idProblem(run.runId, MAX_RUN_ID_BYTES);
  if (runIdProblem !== undefined) throw new TypeError(`runId ${runIdProblem}`);
  if (typeof run.agentId !== 'string' || run.agentId === '') {
    throw new TypeError(`agentId must be a non-empty string, got ${show(run.agentId)}`);
  }
  if (run.sessionId !== undefined && typeof run.sessionId !== 'string') {
    throw new TypeError(`sessionId must be a string when given, got ${show(run.sessionId)}`);
  }
  const sessionProblem = run.sessionId === undefined ? undefined : idProblem(run.sessionId, MAX_RUN_ID_BYTES);
  if (sessionProblem !== undefined && run.sessionId !== '')
    throw new TypeError(`sessionId ${sessionProblem}`);
  checkStatus(run.status);
  checkSnapshot(run.snapshot);
  checkLabels(run.labels);
  if (run.owner !== undefined) checkOwner(run.owner);
  if (run.events !== undefined) checkEvents(run.events);
}

export function checkRunUpdate(update: {
  expectedVersion: unknown;
  status: unknown;
  snapshot: unknown;
  labels?: unknown;
  events?: unknown;
}): void {
  const version = update.expectedVersion;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw new RangeError(`expectedVersion must be an integer >= 1, got ${show(version)}`);
  }
  checkStatus(update.status);
  checkSnapshot(update.snapshot);
  checkLabels(update.labels);
  if (update.events !== undefined) checkEvents(update.events);
}

export function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner === '') {
    throw new TypeError(`owner must be a non-empty string, got ${show(owner)}`);
  }
  return owner;
}

export function checkTtl(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 0) {
    throw new RangeError(`ttlMs must be an integer >= 0, got ${show(ttlMs)}`);
  }
  return ttlMs;
}

/** The statuses a run never leaves; `claim` returns such a run unchanged. */
export const FINISHED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'canceled'];

export function checkListFilter(filter: RunListFilter | undefined): CheckedRunListFilter {
  const checked: CheckedRunListFilter = {};
  if (filter === undefined) return checked;
  if (filter.status !== undefined) {
    const statuses = Array.isArray(filter.status) ? filter.status : [filter.status];
    checked.statuses = [...new Set(statuses.map(checkStatus))];
  }
  if (filter.sessionId !== undefined) {
    if (typeof filter.sessionId !== 'string') {
      throw new TypeError(`sessionId must be a string, got ${show(filter.sessionId)}`);
    }
    checked.sessionId = filter.sessionId;
  }
  if (filter.limit !== undefined) checked.limit = checkPositiveInteger('limit', filter.limit);
  return checked;
}

export function checkEvents(events: unknown): { event: unknown; at: number }[] {
  if (!Array.isArray(events)) throw new TypeError(`events must be an array, got ${show(events)}`);
  for (let index = 0; index < events.length; index++) {
    const entry: unknown = events[index];
    if (typeof entry !== 'object' || entry === null) {
      throw new TypeError(`events[${index}] must be { event, at }, got ${show(entry)}`);
    }
    const { event, at } = entry as { event?: unknown; at?: unknown };
    if (event === undefined)
      throw new TypeError(`events[${index}].event must be a JSON value, got undefined`);
    if (typeof at !== 'number' || !Number.isFinite(at)) {
      throw new TypeError(`events[${index}].at must be epoch milliseconds, got ${show(at)}`);
    }
  }
  return events as { event: unknown; at: number }[];
}

export function checkReadEventsOptions(options: ReadEventsOptions | undefined): {
  afterSeq: number;
  limit?: number;
} {
  const afterSeq = options?.afterSeq ?? 0;
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
    throw new RangeError(`afterSeq must be an integer >= 0, got ${show(afterSeq)}`);
  }
  if (options?.limit === undefined) return { afterSeq };
  return { afterSeq, limit: checkPositiveInteger('limit', options.limit) };
}

function checkPositiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be an integer >= 1, got ${show(value)}`);
  }
  return value;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}

/**
 * What `create` returns for `run` (checked with {@link checkNewRun}), the same from every store:
 * version 1, created and updated at `at` (epoch ms, the store's clock), `snapshot` as the store
 * keeps it, a copy of the labels.
 */
export function createdRun(run: NewRun, at: number, snapshot: unknown): StoredRun {
  return {
    runId: run.runId,
    ...(run.sessionId === undefined ? {} : { sessionId: run.sessionId }),
    agentId: run.agentId,
    status: run.status,
    version: 1,
    snapshot,
    createdAt: at,
    updatedAt: at,
    ...(run.labels === undefined ? {} : { labels: ownLabels(run.labels) }),
    ...(run.owner === undefined ? {} : { owner: run.owner }),
  };
}

/**
 * Labels to keep or hand out: frozen ones as they are (string values: nothing in them can change;
 * the runtime's are the run's own, frozen with its first event), others copied.
 */
export function ownLabels(labels: Record<string, string>): Record<string, string> {
  return Object.isFrozen(labels) ? labels : { ...labels };
}
