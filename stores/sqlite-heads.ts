/**
 * Where the SQLite run store keeps what a step changes (schema 8, issue 36 item 2;
 * docs/benchmarks.md §Durable step floor). A run is three things in the file:
 *
 * - Its run row, `toolwarden_runs`, keyed by run id (`WITHOUT ROWID`: no index of its own to
 *   write): what `list` filters on and a step rarely changes (session, agent, status, labels,
 *   owner, creation time, and `log_key`, the run's number, which places its log range). Written
 *   by `create`; by a save only when the status or the labels change; by `claim` and `release`
 *   (the owner). A new run's number is the highest in the log + 1 (every run's range holds at
 *   least its mark; a deleted last run's number is taken again, its range emptied with it).
 * - Its head, one row of `toolwarden_run_heads`: the snapshot's head (snapshot-rows.ts), the
 *   version and `updated_at`, keyed by `touch`, the write order, so the table holds one head per
 *   run and its key order is `list`'s order, latest write first, with no index a save rewrites.
 *   A save (and a claim) of the run that wrote last rewrites its head in place (it stays the
 *   latest); any other inserts the run's new head at the table's right edge (`touch` = the
 *   highest + 1), then deletes the old one. (A run writing step after step never deletes a head:
 *   a delete that leaves the right-most page under a third full, as a ~1.2 KB head alone on it
 *   does, makes SQLite merge it with its neighbour, three pages more a commit.)
 * - Its log range (sqlite-log.ts): events and snapshot rows, then, closing every write, a mark:
 *   the range's last entry, naming the head (`touch`) and the run's event count (`seq`). A load
 *   seeks the run row, its range's last entry and the head it names: three seeks, no scan. The
 *   head names its run too, so a head found through another run's range (two runs given one
 *   number in a damaged file) is never taken for this run's.
 *
 * So a step's commit writes two b-trees, the log's tail and the heads' right edge (schemas 5–7
 * wrote three: the run row, its write-order index and the log); on the reference loop, WAL pages
 * a step 7.1 (schema 7) → 3.85 (docs/benchmarks.md §Durable step floor).
 *
 * @module
 */

import { LOG_SPAN, MARK_KIND } from './sqlite-log.ts';

const STATUSES = `('running', 'awaiting', 'completed', 'failed', 'canceled')`;

/**
 * Migration 8: the runs table rebuilt without its per-step columns, each run's head copied out
 * with its `touch_seq` as its write order, and each run's mark appended after its log range's
 * entries (at `log_seq`, the range's next number).
 */
export const HEADS_MIGRATION: string[] = [
  `CREATE TABLE toolwarden_runs_8 (
    run_id TEXT PRIMARY KEY,
    log_key INTEGER NOT NULL,
    session_id TEXT,
    agent_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ${STATUSES}),
    labels TEXT,
    created_at INTEGER NOT NULL,
    owner TEXT
  ) WITHOUT ROWID`,
  `INSERT INTO toolwarden_runs_8 (run_id, log_key, session_id, agent_id, status, labels, created_at, owner)
    SELECT run_id, log_key, session_id, agent_id, status, labels, created_at, owner FROM toolwarden_runs`,
  `CREATE TABLE toolwarden_run_heads (
    touch INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    snapshot TEXT NOT NULL
  )`,
  `INSERT INTO toolwarden_run_heads (touch, run_id, version, updated_at, snapshot)
    SELECT touch_seq, run_id, version, updated_at, snapshot FROM toolwarden_runs`,
  'ALTER TABLE toolwarden_run_log ADD COLUMN touch INTEGER',
  `INSERT INTO toolwarden_run_log (id, kind, seq, value, at, touch)
    SELECT log_key * ${LOG_SPAN} + log_seq, ${MARK_KIND}, event_seq, '', NULL, touch_seq FROM toolwarden_runs`,
  'DROP TABLE toolwarden_runs',
  'ALTER TABLE toolwarden_runs_8 RENAME TO toolwarden_runs',
  'CREATE INDEX toolwarden_runs_by_status ON toolwarden_runs (status)',
  // Most runs have no session: they are not in this index at all, and `session_id = ?` implies
  // the index's condition, so lists by session still use it.
  'CREATE INDEX toolwarden_runs_by_session ON toolwarden_runs (session_id) WHERE session_id IS NOT NULL',
];

/** The mark of run row `r`: its log range's last entry's id. */
export const MARK_ID = `(SELECT id FROM toolwarden_run_log
    WHERE id BETWEEN r.log_key * ${LOG_SPAN} AND r.log_key * ${LOG_SPAN} + ${LOG_SPAN - 1}
    ORDER BY id DESC LIMIT 1)`;
/** Each run row `r` with its mark `m` and its head `h`. */
export const CURRENT_RUNS = `toolwarden_runs r
  JOIN toolwarden_run_log m ON m.id = ${MARK_ID}
  JOIN toolwarden_run_heads h ON h.touch = m.touch AND h.run_id = r.run_id`;

/** A stored run's columns but its snapshot (run row `r`, head `h`), as `toStoredRun` reads them. */
export const RUN_COLUMNS =
  'r.run_id, r.session_id, r.agent_id, r.status, r.labels, r.created_at, r.owner, h.version, h.updated_at';

/** The run a write starts from: its row, its mark (position in the range, event count, head) and version. */
export const CURRENT_RUN = `SELECT ${RUN_COLUMNS}, r.log_key, m.id - r.log_key * ${LOG_SPAN} AS mark,
    m.seq AS event_seq, m.touch, m.value AS live
  FROM ${CURRENT_RUNS} WHERE r.run_id = ?`;

/** The statements on run rows and heads (each prepared once per connection). */
export const HEAD_SQL = {
  /** A new run's row; no row back when the run id is taken. */
  insertRun: `INSERT INTO toolwarden_runs (run_id, log_key, session_id, agent_id, status, labels, created_at, owner)
    VALUES (?, (SELECT coalesce(max(id), 0) FROM toolwarden_run_log) / ${LOG_SPAN} + 1, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (run_id) DO NOTHING RETURNING log_key`,
  /** A run's new head at the right edge: `[run_id, version, updated_at, snapshot]`; its `touch` back. */
  insertHead: `INSERT INTO toolwarden_run_heads (run_id, version, updated_at, snapshot)
    VALUES (?, ?, ?, ?) RETURNING touch`,
  /** The head at `touch` again at the right edge: `[version, updated_at, snapshot or null to keep it, touch]`. */
  moveHead: `INSERT INTO toolwarden_run_heads (run_id, version, updated_at, snapshot)
    SELECT run_id, ?, ?, coalesce(?, snapshot) FROM toolwarden_run_heads WHERE touch = ? RETURNING touch`,
  /** {@link HEAD_SQL.moveHead}'s parameters, in place if the head at `touch` is the newest: changes 1 if so. */
  rewriteNewestHead: `UPDATE toolwarden_run_heads SET version = ?, updated_at = ?, snapshot = coalesce(?, snapshot)
    WHERE touch = ? AND touch = (SELECT max(touch) FROM toolwarden_run_heads)`,
  /**
   * {@link HEAD_SQL.rewriteNewestHead} when the run is as this store last wrote it: its head at
   * `touch` at the version and time it wrote, the newest, and its mark still the range's last
   * entry (a write by anyone else since moves or rewrites the head, or adds entries after the
   * mark): changes 1 if so, and the store skips reading the run back. Parameters: the new
   * `[version, updated_at, snapshot]`, then `touch`, the known version and `updated_at`, then
   * `log_key`, the mark's position, event count and `touch`, then `log_key`, the position after
   * the mark, `log_key`.
   */
  rewriteKnownHead: `UPDATE toolwarden_run_heads SET version = ?, updated_at = ?, snapshot = ?
    WHERE touch = ? AND version = ? AND updated_at = ?
      AND touch = (SELECT max(touch) FROM toolwarden_run_heads)
      AND EXISTS (SELECT 1 FROM toolwarden_run_log WHERE id = ? * ${LOG_SPAN} + ?
        AND kind = ${MARK_KIND} AND seq = ? AND touch = ?)
      AND NOT EXISTS (SELECT 1 FROM toolwarden_run_log
        WHERE id BETWEEN ? * ${LOG_SPAN} + ? AND ? * ${LOG_SPAN} + ${LOG_SPAN - 1})`,
  deleteHead: 'DELETE FROM toolwarden_run_heads WHERE touch = ?',
  /** The head of the run with this id (its mark names it). */
  deleteHeadOf: `DELETE FROM toolwarden_run_heads WHERE touch IN (
    SELECT m.touch FROM toolwarden_runs r JOIN toolwarden_run_log m ON m.id = ${MARK_ID} WHERE r.run_id = ?)`,
  // Status and labels set apart: SQLite rewrites the index of every column an UPDATE sets, changed
  // or not, and labels change far more rarely than a run's status.
  setStatus: 'UPDATE toolwarden_runs SET status = ? WHERE run_id = ?',
  setLabels: 'UPDATE toolwarden_runs SET labels = ? WHERE run_id = ?',
  deleteRun: 'DELETE FROM toolwarden_runs WHERE run_id = ?',
} as const;
