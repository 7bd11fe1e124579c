/**
 * The SQL the SQLite run store runs (`sqlite-store.ts`) beyond a write's own (run rows and heads:
 * `sqlite-heads.ts`; the run log: `sqlite-log.ts`), each statement prepared once per connection,
 * and the codec of a run read back as a {@link StoredRun}.
 *
 * @module
 */

import type { RunStatus, StoredRun } from './run-store.ts';
import { CURRENT_RUNS, MARK_ID, RUN_COLUMNS } from './sqlite-heads.ts';

/** A result row: column name → value. */
export type Row = Record<string, unknown>;

const FINISHED = `('completed', 'failed', 'canceled')`;

/** The SQL of every statement the store runs (each prepared once per connection). */
export const SQL = {
  loadRun: `SELECT ${RUN_COLUMNS}, h.snapshot FROM ${CURRENT_RUNS} WHERE r.run_id = ?`,
  runKey: 'SELECT log_key FROM toolwarden_runs WHERE run_id = ?',
  heartbeat: `INSERT INTO toolwarden_run_owners (owner, lease_until) VALUES (?, ?)
    ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until`,
  /** Takes the run for an owner if no other owner's lease is live; a row back if so (then its head advances). */
  claim: `UPDATE toolwarden_runs
    SET owner = ?
    WHERE run_id = ? AND status NOT IN ${FINISHED}
      AND (owner IS NULL OR owner = ? OR NOT EXISTS (
        SELECT 1 FROM toolwarden_run_owners o
        WHERE o.owner = toolwarden_runs.owner AND o.lease_until > ?))
    RETURNING log_key`,
  claimRefused: `SELECT ${RUN_COLUMNS}, h.snapshot,
      (SELECT lease_until FROM toolwarden_run_owners o WHERE o.owner = r.owner) AS lease_until
    FROM ${CURRENT_RUNS} WHERE r.run_id = ?`,
  release: 'UPDATE toolwarden_runs SET owner = NULL WHERE run_id = ? AND owner = ?',
} as const;

/**
 * `list`'s statement, latest write first (`where`: conditions on run row `r`, `limited`: a
 * `LIMIT ?` parameter last). Without conditions: the heads in key order (write order), each with
 * its run row, reading only as many as the limit. With conditions: the matching runs found by
 * their index (status, session), each with its mark (its head's `touch`), sorted and cut to the
 * limit before any head is read (sorted with their snapshots, 10 of 6,667 completed runs took
 * 14 ms, as against 4 ms at schema 7), then each with its head; the rows come back in write
 * order by `touch` (the caller sorts: SQL keeps no order through the join).
 */
export function listSql(where: readonly string[], limited: boolean): string {
  const limit = limited ? ' LIMIT ?' : '';
  if (where.length === 0) {
    return `SELECT ${RUN_COLUMNS}, h.snapshot, h.touch FROM toolwarden_run_heads h
      JOIN toolwarden_runs r ON r.run_id = h.run_id ORDER BY h.touch DESC${limit}`;
  }
  return `SELECT ${RUN_COLUMNS}, h.snapshot, h.touch FROM (
      SELECT r.run_id, r.session_id, r.agent_id, r.status, r.labels, r.created_at, r.owner, m.touch
      FROM toolwarden_runs r JOIN toolwarden_run_log m ON m.id = ${MARK_ID}
      WHERE ${where.join(' AND ')} ORDER BY m.touch DESC${limit}
    ) r JOIN toolwarden_run_heads h ON h.touch = r.touch AND h.run_id = r.run_id`;
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
