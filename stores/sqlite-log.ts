/**
 * The SQLite run store's log (schema 5, issue 36 item 2; docs/benchmarks.md §Durable step floor):
 * one table, `toolwarden_run_log`, holds every run's events and snapshot member rows
 * (snapshot-rows.ts), keyed so that a run's entries sit together in the order they were written.
 *
 * An entry's key (its rowid, `id`) is `log_key * LOG_SPAN + n`: `log_key` is the run's own number
 * (`toolwarden_runs.log_key`, the highest one + 1 when the run is created), `n` the run's entry
 * counter (`log_seq`, advanced by every write in the same transaction). So a step's events and
 * rows go to one b-tree, with no index of their own, at the right edge of the run's range (the
 * right edge of the table while the run is the newest); before, a commit wrote the events table,
 * its key's index, the rows table and its key's index. A run's events are read by its key range
 * (`kind` 0, in `id` order, which is `seq` order); its rows likewise (`kind` 1 + the member's
 * index in ROW_MEMBERS, `seq` the row's index: since schema 7 a run's batch too, kinds 3–6, whose
 * results are written slot by slot as they land: of two entries of one index, the later wins).
 *
 * Limits: 2³² entries a run, 2³¹ run numbers (`log_key * LOG_SPAN` stays an exact 64-bit integer).
 * Reading a run's events after a `seq` scans its range from the start (events and rows alike):
 * O(the run's entries), ~3,500 for a 500-step run, a rowid range scan.
 *
 * @module
 */

import type { NewRunEvent } from './run-store.ts';
import { type MemberRows, ROW_MEMBERS } from './snapshot-rows.ts';

/** Entries a run's key range holds. */
export const LOG_SPAN = 2 ** 32;
/** `kind` of an event entry (`seq`: the event's number). */
export const EVENT_KIND = 0;

/**
 * `kind` of a snapshot member's rows (`seq`: the row's index).
 *
 * @throws Error for a name not in ROW_MEMBERS (its rows would otherwise be stored as events).
 */
export function memberKind(member: string): number {
  const index = ROW_MEMBERS.findIndex(({ name }) => name === member);
  if (index === -1) throw new Error(`no snapshot member "${member}" is kept as rows`);
  return 1 + index;
}
/** The snapshot member whose rows have this `kind`. */
export const memberOfKind = (kind: number): string => ROW_MEMBERS[kind - 1]!.name;

/** The key range of the run whose `toolwarden_runs` row is `r`. */
const RANGE = `BETWEEN r.log_key * ${LOG_SPAN} AND r.log_key * ${LOG_SPAN} + ${LOG_SPAN - 1}`;
/** A run's entries, joined to its run row `r`. */
const RUN_LOG = `toolwarden_runs r JOIN toolwarden_run_log l ON l.id ${RANGE}`;

/** Migration 5: the log table, the runs' new columns, the old tables' entries copied into it. */
export const LOG_MIGRATION: string[] = [
  'ALTER TABLE toolwarden_runs ADD COLUMN log_key INTEGER',
  'ALTER TABLE toolwarden_runs ADD COLUMN log_seq INTEGER NOT NULL DEFAULT 0',
  'UPDATE toolwarden_runs SET log_key = rowid',
  'CREATE UNIQUE INDEX toolwarden_runs_by_log_key ON toolwarden_runs (log_key)',
  `CREATE TABLE toolwarden_run_log (
    id INTEGER PRIMARY KEY,
    kind INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    value TEXT NOT NULL,
    at INTEGER
  )`,
  // Each run's events, then its rows member by member, numbered 0, 1, … in its range.
  `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + row_number() OVER (PARTITION BY u.run_id ORDER BY u.kind, u.seq) - 1,
      u.kind, u.seq, u.value, u.at
    FROM (
      SELECT run_id, ${EVENT_KIND} AS kind, seq, event AS value, at FROM toolwarden_run_events
      UNION ALL
      SELECT run_id, CASE member WHEN 'messages' THEN 1 WHEN 'hints' THEN 2 END,
        idx, value, NULL
      FROM toolwarden_run_rows
    ) u JOIN toolwarden_runs r ON r.run_id = u.run_id
    WHERE u.kind IS NOT NULL`,
  `UPDATE toolwarden_runs SET log_seq = (SELECT count(*) FROM toolwarden_run_log l
    WHERE l.id BETWEEN toolwarden_runs.log_key * ${LOG_SPAN} AND toolwarden_runs.log_key * ${LOG_SPAN} + ${LOG_SPAN - 1})`,
  'DROP TABLE toolwarden_run_events',
  'DROP TABLE toolwarden_run_rows',
];

/** The statements on the log (each prepared once per connection). */
export const LOG_SQL = {
  /** A new run's entries: one JSON array of `[kind, seq, valueText, at]`, numbered from 0. */
  insertOfNewRun: `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + e.key, e.value ->> 0, e.value ->> 1, e.value ->> 2, e.value ->> 3
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ?`,
  /**
   * A save's entries, one JSON array of `[offset, kind, seq, valueText, at]` (an event's `seq`
   * counts on from the run's), numbered after the run's counter, if the run is at the version.
   */
  insertAtVersion: `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + r.log_seq + (e.value ->> 0), e.value ->> 1,
      CASE WHEN e.value ->> 1 = ${EVENT_KIND} THEN r.event_seq + (e.value ->> 2) ELSE e.value ->> 2 END,
      e.value ->> 3, e.value ->> 4
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ? AND r.version = ?`,
  /** Events appended outside a save, `[eventText, at]`, after `reserve` advanced both counters by their count. */
  insertReserved: `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + r.log_seq - ? + e.key, ${EVENT_KIND}, r.event_seq - ? + e.key,
      e.value ->> 0, e.value ->> 1
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ?`,
  reserve: 'UPDATE toolwarden_runs SET event_seq = event_seq + ?, log_seq = log_seq + ? WHERE run_id = ?',
  /** The snapshot rows of the runs named in a JSON array (`seq`: the row's index), by run, in write order. */
  runRows: `SELECT r.run_id, l.kind, l.seq, l.value FROM ${RUN_LOG}
    WHERE r.run_id IN (SELECT value FROM json_each(?)) AND l.kind > ${EVENT_KIND} ORDER BY r.run_id, l.id`,
  readEvents: `SELECT l.seq, l.value AS event, l.at FROM ${RUN_LOG}
    WHERE r.run_id = ? AND l.kind = ${EVENT_KIND} AND l.seq > ? ORDER BY l.id`,
  readEventsLimit: `SELECT l.seq, l.value AS event, l.at FROM ${RUN_LOG}
    WHERE r.run_id = ? AND l.kind = ${EVENT_KIND} AND l.seq > ? ORDER BY l.id LIMIT ?`,
  /** Before the run row goes (its `log_key` names the range). */
  deleteOfRun: `DELETE FROM toolwarden_run_log WHERE id BETWEEN
    (SELECT log_key * ${LOG_SPAN} FROM toolwarden_runs WHERE run_id = ?) AND
    (SELECT log_key * ${LOG_SPAN} + ${LOG_SPAN - 1} FROM toolwarden_runs WHERE run_id = ?)`,
} as const;

/** One entry a write adds: `[offset in the write, kind, seq, valueText, at]`. */
export type LogEntry = [offset: number, kind: number, seq: number, value: string, at: number | null];

/**
 * What a write adds to the run's log, in order: its events (`seq` 1, 2, … after the run's
 * counter), then each member's new rows (`seq` their index; a later entry of a `slots` member's
 * index replaces the earlier one when read back, snapshot-rows.ts).
 */
export function logEntries(events: readonly NewRunEvent[], members: readonly MemberRows[]): LogEntry[] {
  const entries: LogEntry[] = [];
  for (let i = 0; i < events.length; i++) {
    const { event, at } = events[i]!;
    entries.push([entries.length, EVENT_KIND, i + 1, JSON.stringify(event), at]);
  }
  for (const { member, rows } of members) {
    const kind = memberKind(member);
    for (const [index, value] of rows)
      entries.push([entries.length, kind, index, JSON.stringify(value), null]);
  }
  return entries;
}

/**
 * The delete of a save's trimmed members (`MemberRows.trimFrom`): their rows from each index
 * on, if the run is at the version; one statement for them all (each is a scan of the run's
 * range: at a batch's end its calls, its results and the results handed on before go at once).
 * Parameters: `runId`, `version`, then `kind`, `from` per member.
 */
export function trimStatement(count: number): string {
  const trimmed = Array.from({ length: count }, () => '(l.kind = ? AND l.seq >= ?)').join(' OR ');
  return `DELETE FROM toolwarden_run_log WHERE id IN (
    SELECT l.id FROM ${RUN_LOG} WHERE r.run_id = ? AND r.version = ? AND (${trimmed}))`;
}

/** {@link trimStatement}'s SQL and parameters for the members of a save that trim, or `undefined`. */
export function logTrim(
  members: readonly MemberRows[],
  runId: string,
  version: number,
): { sql: string; args: unknown[] } | undefined {
  const args: unknown[] = [runId, version];
  for (const { member, trimFrom } of members) {
    if (trimFrom !== undefined) args.push(memberKind(member), trimFrom);
  }
  return args.length === 2 ? undefined : { sql: trimStatement((args.length - 2) / 2), args };
}

/**
 * A save's log insert with its entries bound as parameters of a `VALUES` list, one statement per
 * count up to this (more go as JSON arrays, {@link logInserts}): a step writes
 * ~5 events and 2 transcript rows, and binding them is ~10 µs less than a JSON array SQLite parses.
 */
export const MAX_BOUND_ENTRIES = 12;
const valuesOf = (count: number) =>
  `(VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?)').join(', ')})`;
/** By entry count (index 0 is never run); parameters as {@link LOG_SQL}.insertAtVersion's entries, flat. */
const BOUND_INSERTS = Array.from(
  { length: MAX_BOUND_ENTRIES + 1 },
  (_, count) => `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + r.log_seq + v.column1, v.column2,
      CASE WHEN v.column2 = ${EVENT_KIND} THEN r.event_seq + v.column3 ELSE v.column3 END, v.column4, v.column5
    FROM toolwarden_runs r, ${valuesOf(count)} v WHERE r.run_id = ? AND r.version = ?`,
);

/**
 * A run of a save's entries inserted by one statement: consecutive entries of one `kind` and one
 * `at` whose `seq`s follow each other, their values as one JSON array of strings. json_each
 * hands each string over as it is; taking five members out of each `[offset, kind, seq, value,
 * at]` array instead cost ~2.5× as much (10,000 events of ~270 bytes: ~20 ms against ~50 of
 * SQLite's CPU, and ~4 ms against ~9 to encode; measured 2026-12-02). Parameters: the run's
 * first offset, `kind`, first `seq` (an event's counts on from the run's), `at`, the values,
 * then `runId` and `version`.
 */
const RUN_INSERTS = {
  events: `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + r.log_seq + ? + e.key, ?, r.event_seq + ? + e.key, e.value, ?
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ? AND r.version = ?`,
  rows: `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + r.log_seq + ? + e.key, ?, ? + e.key, e.value, ?
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ? AND r.version = ?`,
  /** One row, its value bound as it is (a batch's calls, ~2 MB for 10,000, go unescaped). */
  row: `INSERT INTO toolwarden_run_log (id, kind, seq, value, at)
    SELECT r.log_key * ${LOG_SPAN} + r.log_seq + ?, ?, ?, ?, ?
    FROM toolwarden_runs r WHERE r.run_id = ? AND r.version = ?`,
} as const;

/**
 * A save's log inserts (`sql`, `args`), run in order: bound `VALUES` rows when few; else a
 * statement per run of entries ({@link RUN_INSERTS}: a batch's 10,000 events, a fold's 10,000
 * transcript rows) when they come in few runs, or one JSON array of them all when scattered
 * (results landing out of order).
 */
export function logInserts(
  entries: LogEntry[],
  runId: string,
  version: number,
): { sql: string; args: unknown[] }[] {
  if (entries.length <= MAX_BOUND_ENTRIES) {
    return [{ sql: BOUND_INSERTS[entries.length]!, args: [...entries.flat(), runId, version] }];
  }
  const runs = entryRuns(entries);
  if (runs.length > 4 + entries.length / 16) {
    return [{ sql: LOG_SQL.insertAtVersion, args: [JSON.stringify(entries), runId, version] }];
  }
  return runs.map(({ first, values }) =>
    first[1] !== EVENT_KIND && values.length === 1
      ? { sql: RUN_INSERTS.row, args: [...first, runId, version] }
      : {
          sql: first[1] === EVENT_KIND ? RUN_INSERTS.events : RUN_INSERTS.rows,
          args: [first[0], first[1], first[2], first[4], JSON.stringify(values), runId, version],
        },
  );
}

/** `entries` cut into runs of one kind and one `at`, each `seq` one more than the one before. */
function entryRuns(entries: readonly LogEntry[]): { first: LogEntry; values: string[] }[] {
  const runs: { first: LogEntry; values: string[] }[] = [];
  let last: LogEntry | undefined;
  let run: { first: LogEntry; values: string[] } | undefined;
  for (const entry of entries) {
    if (run === undefined || entry[1] !== last![1] || entry[4] !== last![4] || entry[2] !== last![2] + 1) {
      run = { first: entry, values: [] };
      runs.push(run);
    }
    run.values.push(entry[3]);
    last = entry;
  }
  return runs;
}
