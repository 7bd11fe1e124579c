/**
 * The SQL the SQLite run store runs (`sqlite-store.ts`), each statement prepared once per
 * connection, and the codec of a runs row read back as a {@link StoredRun}; the run log's
 * statements (events and snapshot rows) are in `sqlite-log.ts`.
 *
 * @module
 */

import type { NewRunEvent, RunStatus, StoredRun } from './run-store.ts';

/** A result row: column name → value. */
export type Row = Record<string, unknown>;

export const RUN_COLUMNS =
  'run_id, session_id, agent_id, status, version, snapshot, labels, created_at, updated_at, owner';
export const RUN_COLUMNS_WITHOUT_SNAPSHOT =
  'run_id, session_id, agent_id, status, version, labels, created_at, updated_at, owner';
const FINISHED = `('completed', 'failed', 'canceled')`;
/** The next write-order number; the unique index on touch_seq makes max() a lookup. */
const NEXT_TOUCH = '(SELECT coalesce(max(touch_seq), 0) + 1 FROM toolwarden_runs)';

/** The SQL of every statement the store runs (each prepared once per connection). */
export const SQL = {
  insertRun: `INSERT INTO toolwarden_runs (run_id, session_id, agent_id, status, version, snapshot, labels,
      created_at, updated_at, touch_seq, event_seq, owner, log_key, log_seq)
    VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ${NEXT_TOUCH}, ?, ?, (SELECT coalesce(max(log_key), 0) + 1 FROM toolwarden_runs), ?)
    ON CONFLICT (run_id) DO NOTHING`,
  loadRun: `SELECT ${RUN_COLUMNS} FROM toolwarden_runs WHERE run_id = ?`,
  updateRun: `UPDATE toolwarden_runs
    SET status = ?, snapshot = ?, labels = coalesce(?, labels), version = version + 1,
        updated_at = ?, touch_seq = ${NEXT_TOUCH}, event_seq = event_seq + ?, log_seq = log_seq + ?
    WHERE run_id = ? AND version = ?`,
  /**
   * `updateRun` for a save that keeps the status (most steps): without `status` in its SET list,
   * whose index SQLite would otherwise rewrite; the same parameters but the status.
   */
  updateRunSameStatus: `UPDATE toolwarden_runs
    SET snapshot = ?, labels = coalesce(?, labels), version = version + 1,
        updated_at = ?, touch_seq = ${NEXT_TOUCH}, event_seq = event_seq + ?, log_seq = log_seq + ?
    WHERE run_id = ? AND version = ?`,
  runVersion: 'SELECT version FROM toolwarden_runs WHERE run_id = ?',
  deleteRun: 'DELETE FROM toolwarden_runs WHERE run_id = ?',
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
 * Events as one JSON array of `[eventText, at]` pairs, for a single `json_each` insert (one
 * statement, whatever the count: ~25 µs less per event than a statement each).
 */
export function eventRows(events: NewRunEvent[]): string {
  return JSON.stringify(events.map(({ event, at }) => [JSON.stringify(event), at]));
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
