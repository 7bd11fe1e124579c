/**
 * The SQL the SQLite run store runs (`sqlite-store.ts`), each statement prepared once per
 * connection, and the codec between its rows and runs: events and snapshot member rows bound as
 * parameters (few) or as one JSON array (many), a runs row read back as a {@link StoredRun}.
 *
 * @module
 */

import type { NewRunEvent, RunStatus, StoredRun } from './run-store.ts';
import type { MemberRows } from './snapshot-rows.ts';

/** A result row: column name → value. */
export type Row = Record<string, unknown>;

export const RUN_COLUMNS =
  'run_id, session_id, agent_id, status, version, snapshot, labels, created_at, updated_at, owner';
export const RUN_COLUMNS_WITHOUT_SNAPSHOT =
  'run_id, session_id, agent_id, status, version, labels, created_at, updated_at, owner';
const FINISHED = `('completed', 'failed', 'canceled')`;
/** The next write-order number; the unique index on touch_seq makes max() a lookup. */
const NEXT_TOUCH = '(SELECT coalesce(max(touch_seq), 0) + 1 FROM toolwarden_runs)';
/** The run is at the version a save names (the condition every statement of a save repeats). */
const AT_VERSION = 'EXISTS (SELECT 1 FROM toolwarden_runs WHERE run_id = ? AND version = ?)';

/** The SQL of every statement the store runs (each prepared once per connection). */
export const SQL = {
  insertEventsIfAbsent: `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT ?, e.key + 1, e.value ->> 0, e.value ->> 1 FROM json_each(?) e
    WHERE NOT EXISTS (SELECT 1 FROM toolwarden_runs WHERE run_id = ?)`,
  insertRowsIfAbsent: `INSERT INTO toolwarden_run_rows (run_id, member, idx, value)
    SELECT ?, e.value ->> 0, e.value ->> 1, e.value ->> 2 FROM json_each(?) e
    WHERE NOT EXISTS (SELECT 1 FROM toolwarden_runs WHERE run_id = ?)`,
  insertRun: `INSERT INTO toolwarden_runs (run_id, session_id, agent_id, status, version, snapshot, labels,
      created_at, updated_at, touch_seq, event_seq, owner)
    VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ${NEXT_TOUCH}, ?, ?)
    ON CONFLICT (run_id) DO NOTHING`,
  loadRun: `SELECT ${RUN_COLUMNS} FROM toolwarden_runs WHERE run_id = ?`,
  runRows: `SELECT run_id, member, value FROM toolwarden_run_rows
    WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, member, idx`,
  insertEventsAtVersion: `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT r.run_id, r.event_seq + e.key + 1, e.value ->> 0, e.value ->> 1
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ? AND r.version = ?`,
  trimRowsAtVersion: `DELETE FROM toolwarden_run_rows WHERE run_id = ? AND member = ? AND idx >= ? AND ${AT_VERSION}`,
  upsertRowsAtVersion: `INSERT INTO toolwarden_run_rows (run_id, member, idx, value)
    SELECT ?, e.value ->> 0, e.value ->> 1, e.value ->> 2 FROM json_each(?) e WHERE ${AT_VERSION}
    ON CONFLICT (run_id, member, idx) DO UPDATE SET value = excluded.value`,
  updateRun: `UPDATE toolwarden_runs
    SET status = ?, snapshot = ?, labels = coalesce(?, labels), version = version + 1,
        updated_at = ?, touch_seq = ${NEXT_TOUCH}, event_seq = event_seq + ?
    WHERE run_id = ? AND version = ?`,
  /**
   * `updateRun` for a save that keeps the status (most steps): without `status` in its SET list,
   * whose index SQLite would otherwise rewrite; the same parameters but the status.
   */
  updateRunSameStatus: `UPDATE toolwarden_runs
    SET snapshot = ?, labels = coalesce(?, labels), version = version + 1,
        updated_at = ?, touch_seq = ${NEXT_TOUCH}, event_seq = event_seq + ?
    WHERE run_id = ? AND version = ?`,
  runVersion: 'SELECT version FROM toolwarden_runs WHERE run_id = ?',
  reserveEvents: 'UPDATE toolwarden_runs SET event_seq = event_seq + ? WHERE run_id = ?',
  insertReservedEvents: `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT r.run_id, r.event_seq - ? + e.key, e.value ->> 0, e.value ->> 1
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ?`,
  readEvents: 'SELECT seq, event, at FROM toolwarden_run_events WHERE run_id = ? AND seq > ? ORDER BY seq',
  readEventsLimit:
    'SELECT seq, event, at FROM toolwarden_run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  deleteEvents: 'DELETE FROM toolwarden_run_events WHERE run_id = ?',
  deleteRun: 'DELETE FROM toolwarden_runs WHERE run_id = ?',
  deleteRows: 'DELETE FROM toolwarden_run_rows WHERE run_id = ?',
  heartbeat: `INSERT INTO toolwarden_run_owners (owner, lease_until) VALUES (?, ?)
    ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until`,
  claim: `UPDATE toolwarden_runs
    SET owner = ?, version = version + 1, updated_at = ?, touch_seq = ${NEXT_TOUCH}
    WHERE run_id = ? AND status NOT IN ${FINISHED}
      AND (owner IS NULL OR owner = ? OR NOT EXISTS (
        SELECT 1 FROM toolwarden_run_owners o
        WHERE o.owner = toolwarden_runs.owner AND o.lease_until > ?))
    RETURNING ${RUN_COLUMNS}`,
  claimRefused: `SELECT ${RUN_COLUMNS},
      (SELECT lease_until FROM toolwarden_run_owners o WHERE o.owner = r.owner) AS lease_until
    FROM toolwarden_runs r WHERE run_id = ?`,
  release: 'UPDATE toolwarden_runs SET owner = NULL WHERE run_id = ? AND owner = ?',
} as const;

/**
 * A save's inserts with their rows bound as parameters of a `VALUES` list, one statement per row
 * count up to {@link MAX_BOUND_ROWS} (more go through the `json_each` forms above): ~10 µs less per
 * step than nesting the rows in a JSON array that SQLite parses again (4 events and 2 transcript
 * rows a step, docs/benchmarks.md §"SQLite per step").
 */
export const MAX_BOUND_ROWS = 8;
const valuesOf = (count: number) => `(VALUES ${Array.from({ length: count }, () => '(?, ?, ?)').join(', ')})`;
/** By row count (index 0 is never run). */
export const BOUND = {
  /** `[seq offset, eventText, at]` rows, numbered after the run's counter at `expectedVersion`. */
  insertEventsAtVersion: Array.from(
    { length: MAX_BOUND_ROWS + 1 },
    (_, count) => `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT r.run_id, r.event_seq + v.column1, v.column2, v.column3
    FROM toolwarden_runs r, ${valuesOf(count)} v WHERE r.run_id = ? AND r.version = ?`,
  ),
  /** `[member, idx, valueText]` rows. */
  upsertRowsAtVersion: Array.from(
    { length: MAX_BOUND_ROWS + 1 },
    (_, count) => `INSERT INTO toolwarden_run_rows (run_id, member, idx, value)
    SELECT ?, v.column1, v.column2, v.column3 FROM ${valuesOf(count)} v WHERE ${AT_VERSION}
    ON CONFLICT (run_id, member, idx) DO UPDATE SET value = excluded.value`,
  ),
};

/**
 * Events as one JSON array of `[eventText, at]` pairs, for a single `json_each` insert (one
 * statement, whatever the count: ~25 µs less per event than a statement each).
 */
export function eventRows(events: NewRunEvent[]): string {
  return JSON.stringify(events.map(({ event, at }) => [JSON.stringify(event), at]));
}

/**
 * The member rows a write adds, every member in one JSON array of `[member, idx, valueText]`
 * for a single `json_each` insert; `undefined` when there are none.
 */
export function rowEntries(members: readonly MemberRows[]): string | undefined {
  const entries: [string, number, string][] = [];
  for (const { member, from, values } of members) {
    for (let i = 0; i < values.length; i++) entries.push([member, from + i, JSON.stringify(values[i])]);
  }
  return entries.length === 0 ? undefined : JSON.stringify(entries);
}

/** A save's event insert: bound `VALUES` rows when few ({@link BOUND}), else one JSON array. */
export function boundEvents(events: NewRunEvent[], runId: string, version: number): BoundStatement {
  if (events.length > MAX_BOUND_ROWS) {
    return { sql: SQL.insertEventsAtVersion, args: [eventRows(events), runId, version] };
  }
  const args: unknown[] = [];
  for (let i = 0; i < events.length; i++) {
    const { event, at } = events[i]!;
    args.push(i + 1, JSON.stringify(event), at);
  }
  args.push(runId, version);
  return { sql: BOUND.insertEventsAtVersion[events.length]!, args };
}

/** A save's member-row upsert (as {@link boundEvents}); `undefined` when it adds none. */
export function boundMemberRows(
  members: readonly MemberRows[],
  runId: string,
  version: number,
): BoundStatement | undefined {
  let count = 0;
  for (const { values } of members) count += values.length;
  if (count === 0) return undefined;
  if (count > MAX_BOUND_ROWS) {
    return { sql: SQL.upsertRowsAtVersion, args: [runId, rowEntries(members), runId, version] };
  }
  const args: unknown[] = [runId];
  for (const { member, from, values } of members) {
    for (let i = 0; i < values.length; i++) args.push(member, from + i, JSON.stringify(values[i]));
  }
  args.push(runId, version);
  return { sql: BOUND.upsertRowsAtVersion[count]!, args };
}

export interface BoundStatement {
  sql: string;
  args: unknown[];
}

export function toStoredRun(row: Row, snapshot: unknown): StoredRun {
  const sessionId = row.session_id;
  const labels = row.labels;
  return {
    runId: String(row.run_id),
    ...(sessionId === null || sessionId === undefined ? {} : { sessionId: String(sessionId) }),
    agentId: String(row.agent_id),
    status: String(row.status) as RunStatus,
    version: Number(row.version),
    snapshot,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ...(labels === null || labels === undefined ? {} : { labels: JSON.parse(String(labels)) }),
    ...(row.owner === null || row.owner === undefined ? {} : { owner: String(row.owner) }),
  };
}
