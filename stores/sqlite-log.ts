/**
 * The SQLite run store's log (schema 5, issue 36 item 2; docs/benchmarks.md §Durable step floor):
 * one table, `toolwarden_run_log`, holds every run's events and snapshot member rows
 * (snapshot-rows.ts), keyed so that a run's entries sit together in the order they were written.
 *
 * An entry's key (its rowid, `id`) is `log_key * LOG_SPAN + n`: `log_key` is the run's own number
 * (`toolwarden_runs.log_key`, its rowid: the highest one + 1 when the run is created), `n` the
 * entry's position in the run's range, counted on from the run's last entry, a write's mark
 * (schema 8: every write ends with one, naming the run's head; sqlite-heads.ts). So a step's
 * events and rows go to one b-tree, with no index of their own, at the right edge of the run's
 * range (the right edge of the table while the run is the newest); before schema 5, a commit
 * wrote the events table, its key's index, the rows table and its key's index. A run's events
 * are read by its key range (`kind` 0, in `id` order, which is `seq` order); its rows likewise
 * (`kind` 1 + the member's index in ROW_MEMBERS, `seq` the row's index: since schema 7 a run's
 * batch too, kinds 3–6, whose results are written slot by slot as they land: of two entries of
 * one index, the later wins).
 *
 * Limits: 2³² entries a run (a write's mark included), 2³¹ run numbers (`log_key * LOG_SPAN`
 * stays an exact 64-bit integer; ids are computed in SQL, never in JavaScript, whose numbers are
 * exact to 2⁵³ only).
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
 * `kind` of a write's mark (schema 8, sqlite-heads.ts): the last entry of every write, `seq` the
 * run's event count, `touch` its head's key, `value` where each row member's live rows begin
 * ({@link LiveRows}). Snapshot rows have kinds above {@link EVENT_KIND}.
 */
export const MARK_KIND = -1;

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
      SELECT run_id, CASE member ${ROW_MEMBERS.map(({ name }) => `WHEN '${name}' THEN ${memberKind(name)}`).join(' ')} END,
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
  /** The snapshot rows of the runs named in a JSON array (`seq`: the row's index), by run, in write order. */
  runRows: `SELECT r.run_id, l.kind, l.seq, l.value FROM ${RUN_LOG}
    WHERE r.run_id IN (SELECT value FROM json_each(?)) AND l.kind > ${EVENT_KIND} ORDER BY r.run_id, l.id`,
  readEvents: `SELECT l.seq, l.value AS event, l.at FROM ${RUN_LOG}
    WHERE r.run_id = ? AND l.kind = ${EVENT_KIND} AND l.seq > ? ORDER BY l.id`,
  readEventsLimit: `SELECT l.seq, l.value AS event, l.at FROM ${RUN_LOG}
    WHERE r.run_id = ? AND l.kind = ${EVENT_KIND} AND l.seq > ? ORDER BY l.id LIMIT ?`,
  /** The whole range of the run numbered `?` (`log_key`, twice). */
  deleteOfRun: `DELETE FROM toolwarden_run_log
    WHERE id BETWEEN ? * ${LOG_SPAN} AND ? * ${LOG_SPAN} + ${LOG_SPAN - 1}`,
} as const;

/** One entry a write adds: `[kind, seq, valueText, at]` (an event's `seq` 1, 2, … within the write). */
export type LogEntry = [kind: number, seq: number, value: string, at: number | null];

/**
 * What a write adds to the run's log, in order: its events (`seq` 1, 2, … within the write),
 * then each member's new rows (`seq` their index; a later entry of a `slots` member's index
 * replaces the earlier one when read back, snapshot-rows.ts).
 */
export function logEntries(events: readonly NewRunEvent[], members: readonly MemberRows[]): LogEntry[] {
  const entries: LogEntry[] = [];
  for (let i = 0; i < events.length; i++) {
    const { event, at } = events[i]!;
    entries.push([EVENT_KIND, i + 1, JSON.stringify(event), at]);
  }
  for (const { member, rows } of members) {
    const kind = memberKind(member);
    for (const [index, value] of rows) entries.push([kind, index, JSON.stringify(value), null]);
  }
  return entries;
}

/**
 * By `kind - 1`, the lowest position in the run's range where that row member may have a live
 * row (0, the range's start, when not known). A mark carries those above 0 as `kind:back` pairs
 * (`back`: how far before the mark; `3:8` is a batch's calls 8 entries back), so a trim of a
 * member rewritten at every step (a batch's calls) deletes from there to the mark, not across the
 * whole range: before, a 500-step run's save scanned its ~3,500 entries, ~200 µs.
 */
export type LiveRows = number[];

/** A mark's {@link LiveRows}, the mark at `markAt` (`''`, a mark of before this was kept: none known). */
export function liveRowsOf(value: unknown, markAt: number): LiveRows {
  const live = ROW_MEMBERS.map(() => 0);
  if (typeof value !== 'string' || value === '') return live;
  for (const pair of value.split(',')) {
    const [kind, back] = pair.split(':').map(Number);
    if (kind! >= 1 && kind! <= live.length && back! >= 0) live[kind! - 1] = markAt - back!;
  }
  return live;
}

/** {@link LiveRows} as a mark at `markAt` holds them. */
function liveRowsText(live: LiveRows, markAt: number): string {
  const pairs: string[] = [];
  for (let i = 0; i < live.length; i++) if (live[i]! > 0) pairs.push(`${i + 1}:${markAt - live[i]!}`);
  return pairs.join(',');
}

/**
 * Where in its range a write appends: the run's number, the next position, the events so far
 * (all as the run's last mark, at `next - 1`, says).
 */
export interface LogTail {
  /** `toolwarden_runs.log_key`. */
  logKey: number;
  /** Position in the range of the write's first entry: 0 for a new run, else after the mark. */
  next: number;
  /** The run's events before this write (its mark's `seq`): the write's are numbered on from it. */
  eventSeq: number;
  /** Where each row member's live rows begin, as the run's last mark says. */
  live: LiveRows;
}

/**
 * The delete of a save's trimmed members (`MemberRows.trimFrom`): their rows from each index
 * on, between where their live rows begin and the run's mark; one statement for them all (at a
 * batch's end its calls, its results and the results handed on before go at once). Parameters:
 * `log_key`, the lowest position, `log_key`, the mark's position, then `kind`, `from` per member.
 */
export function trimStatement(count: number): string {
  const trimmed = Array.from({ length: count }, () => '(kind = ? AND seq >= ?)').join(' OR ');
  return `DELETE FROM toolwarden_run_log
    WHERE id BETWEEN ? * ${LOG_SPAN} + ? AND ? * ${LOG_SPAN} + ? AND (${trimmed})`;
}

/** {@link trimStatement}'s SQL and parameters for the members of a save that trim, or `undefined`. */
export function logTrim(
  members: readonly MemberRows[],
  tail: LogTail,
): { sql: string; args: unknown[] } | undefined {
  const args: unknown[] = [tail.logKey, tail.next, tail.logKey, tail.next - 1];
  for (const { member, trimFrom } of members) {
    if (trimFrom === undefined) continue;
    const kind = memberKind(member);
    args[1] = Math.min(args[1] as number, tail.live[kind - 1]!);
    args.push(kind, trimFrom);
  }
  return args.length === 4 ? undefined : { sql: trimStatement((args.length - 4) / 2), args };
}

/**
 * A write's entries with their mark bound as parameters of a `VALUES` list, one statement per
 * count up to this: a step writes ~5 events and 2 transcript rows, and binding them is ~10 µs
 * less than a JSON array SQLite parses.
 */
export const MAX_BOUND_ENTRIES = 12;
const COLUMNS = 'INSERT INTO toolwarden_run_log (id, kind, seq, value, at, touch)';
const valuesOf = (count: number) =>
  `(VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?)').join(', ')})`;
/** By row count, the mark included (index 0 is never run): `[log_key, ...rows flat]`, each row as {@link LogRow}. */
const BOUND_INSERTS = Array.from(
  { length: MAX_BOUND_ENTRIES + 2 },
  (_, count) => `${COLUMNS}
    SELECT ? * ${LOG_SPAN} + v.column1, v.column2, v.column3, v.column4, v.column5, v.column6
    FROM ${valuesOf(count)} v`,
);
/** Scattered entries (results landing out of order): `[log_key, rowsJson]`, each row a {@link LogRow}. */
const JSON_INSERT = `${COLUMNS}
  SELECT ? * ${LOG_SPAN} + (e.value ->> 0), e.value ->> 1, e.value ->> 2, e.value ->> 3, e.value ->> 4,
    e.value ->> 5
  FROM json_each(?) e`;
/**
 * A run of a write's entries inserted by one statement: consecutive entries of one `kind` and one
 * `at` whose `seq`s follow each other, their values as one JSON array of strings. json_each
 * hands each string over as it is; taking five members out of each entry's array instead cost
 * ~2.5× as much (10,000 events of ~270 bytes: ~20 ms against ~50 of SQLite's CPU, and ~4 ms
 * against ~9 to encode; measured 2026-12-02). Parameters: `log_key`, the run's first position,
 * `kind`, first `seq`, `at`, the values.
 */
const RUN_INSERT = `${COLUMNS}
  SELECT ? * ${LOG_SPAN} + ? + e.key, ?, ? + e.key, e.value, ?, NULL FROM json_each(?) e`;
/** One entry, its value bound as it is (a batch's calls, ~2 MB for 10,000, go unescaped): a {@link LogRow} after `log_key`. */
const ONE_INSERT = `${COLUMNS} VALUES (? * ${LOG_SPAN} + ?, ?, ?, ?, ?, ?)`;

/** One row a write inserts: `[position in the range, kind, seq, valueText, at, touch]`. */
type LogRow = [
  position: number,
  kind: number,
  seq: number,
  value: string,
  at: number | null,
  touch: number | null,
];

/**
 * A write's log inserts (`sql`, `args`), run in order: its entries at `tail`, events numbered
 * after the run's, then its mark naming the head `touch`, the run's event count after the write
 * and where each row member's live rows begin (those `members` rewrote from index 0: at their
 * first new row). Bound `VALUES` rows when few; else a statement per run of entries
 * ({@link RUN_INSERT}: a batch's 10,000 events, a fold's 10,000 transcript rows) when they come
 * in few runs, or one JSON array of them all when scattered.
 */
export function logInserts(
  entries: readonly LogEntry[],
  tail: LogTail,
  touch: number,
  members: readonly MemberRows[] = [],
): { inserts: { sql: string; args: unknown[] }[]; after: LogTail } {
  const rows: LogRow[] = [];
  const markAt = tail.next + entries.length;
  const live = [...tail.live];
  for (const { member, trimFrom } of members) if (trimFrom === 0) live[memberKind(member) - 1] = markAt;
  let events = tail.eventSeq;
  for (let i = 0; i < entries.length; i++) {
    const [kind, seq, value, at] = entries[i]!;
    if (kind === EVENT_KIND) events = tail.eventSeq + seq;
    else if (live[kind - 1] === markAt) live[kind - 1] = tail.next + i;
    rows.push([tail.next + i, kind, kind === EVENT_KIND ? events : seq, value, at, null]);
  }
  const mark: LogRow = [markAt, MARK_KIND, events, liveRowsText(live, markAt), null, touch];
  const after: LogTail = { logKey: tail.logKey, next: markAt + 1, eventSeq: events, live };
  if (entries.length <= MAX_BOUND_ENTRIES) {
    rows.push(mark);
    return { inserts: [{ sql: BOUND_INSERTS[rows.length]!, args: [tail.logKey, ...rows.flat()] }], after };
  }
  const runs = rowRuns(rows);
  if (runs.length > 4 + rows.length / 16) {
    rows.push(mark);
    return { inserts: [{ sql: JSON_INSERT, args: [tail.logKey, JSON.stringify(rows)] }], after };
  }
  const inserts = runs.map(({ first, values }) =>
    values.length === 1
      ? { sql: ONE_INSERT, args: [tail.logKey, ...first] }
      : {
          sql: RUN_INSERT,
          args: [tail.logKey, first[0], first[1], first[2], first[4], JSON.stringify(values)],
        },
  );
  inserts.push({ sql: ONE_INSERT, args: [tail.logKey, ...mark] });
  return { inserts, after };
}

/** `rows` cut into runs of one kind and one `at`, each `seq` one more than the one before. */
function rowRuns(rows: readonly LogRow[]): { first: LogRow; values: string[] }[] {
  const runs: { first: LogRow; values: string[] }[] = [];
  let last: LogRow | undefined;
  let run: { first: LogRow; values: string[] } | undefined;
  for (const row of rows) {
    if (run === undefined || row[1] !== last![1] || row[4] !== last![4] || row[2] !== last![2] + 1) {
      run = { first: row, values: [] };
      runs.push(run);
    }
    run.values.push(row[3]);
    last = row;
  }
  return runs;
}
