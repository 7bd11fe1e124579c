/**
 * The PostgreSQL run store's row codec (`postgres-store.ts`): the columns it reads, a runs row
 * back as a {@link StoredRun} (its snapshot joined with its member rows, snapshot-rows.ts), and
 * member rows as `unnest` parameters. Values are jsonb text (`jsonb-value.ts`).
 *
 * @module
 */

import { fromJsonb, toJsonbText } from './jsonb-value.ts';
import type { NewRunEvent, RunStatus, StoredRun } from './run-store.ts';
import { groupRows, hasMarkers, joinSnapshot, type MemberRows } from './snapshot-rows.ts';

/** The runs columns every read selects (the snapshot and member rows are added where read). */
export const RUN_COLUMNS = `run_id, session_id, agent_id, status, version, labels::text AS labels,
  created_at, updated_at, owner`;
/** The finished statuses as an SQL list. */
export const FINISHED = `('completed', 'failed', 'canceled')`;

/** A runs row as `pg` returns it (`double precision` may come back as text). */
export interface RunRow {
  run_id: string;
  session_id: string | null;
  agent_id: string;
  status: string;
  version: number;
  snapshot?: string;
  labels: string | null;
  created_at: number | string;
  updated_at: number | string;
  owner: string | null;
}

/**
 * A save's member rows as statement parameters: `rows`, one jsonb array of `[member, index,
 * value]` (its elements read with `jsonb_array_elements`), and the trimmed members as parallel
 * arrays: member, and the index from which its stored rows go (`trimFrom` past the rows this
 * save writes from there on: one statement must not both delete a row and upsert it, which
 * PostgreSQL leaves unpredictable; and an anti-join of the two, planned as a nested loop, took
 * 3.9 s for a 4,000-call batch's fold).
 *
 * A `slots` member rewritten from `trimFrom` writes its empty slots too, as `null` rows, so that
 * the rows it writes are contiguous; a `null` row reads back as the empty slot it is.
 *
 * One jsonb text, assembled from each value's own jsonb text: `pg` sends an array parameter
 * (`jsonb[]`) with every element quoted and its quotes and backslashes escaped again, ~14 ms of
 * the event loop for a 10,000-call batch's 1.7 MB of calls, and as much for 10,000 transcript rows.
 */
export function rowParams(rows: readonly MemberRows[]): {
  rows: string;
  trimmed: string[];
  trimFrom: number[];
} {
  const items: string[] = [];
  const trimmed: string[] = [];
  const trimFrom: number[] = [];
  for (const { member, trimFrom: from, rows: memberRows } of rows) {
    const name = JSON.stringify(member);
    if (from === undefined) {
      for (const [index, value] of memberRows) items.push(`[${name},${index},${toJsonbText(value)}]`);
      continue;
    }
    // Rows below `from` (slots replaced) as they are; from `from` on, every index up to the last.
    let next = from;
    for (const [index, value] of memberRows) {
      if (index < from) {
        items.push(`[${name},${index},${toJsonbText(value)}]`);
        continue;
      }
      for (; next < index; next++) items.push(`[${name},${next},null]`);
      items.push(`[${name},${index},${toJsonbText(value)}]`);
      next = index + 1;
    }
    trimmed.push(member);
    trimFrom.push(next);
  }
  return { rows: `[${items.join(',')}]`, trimmed, trimFrom };
}

/** Events as one jsonb array of `[event, at]` (see {@link rowParams} for why not `jsonb[]`). */
export function eventsParam(events: readonly NewRunEvent[]): string {
  const items = events.map(({ event, at }) => `[${toJsonbText(event)},${JSON.stringify(at)}]`);
  return `[${items.join(',')}]`;
}

/** A jsonb value read as text, back as the value it was given as (`jsonb-value.ts`). */
export function parseJsonb(text: string): unknown {
  return fromJsonb(JSON.parse(text));
}

/** A runs row as a {@link StoredRun} with `snapshot`. */
export function toStoredRun(row: RunRow, snapshot: unknown): StoredRun {
  return {
    runId: row.run_id,
    ...(row.session_id === null ? {} : { sessionId: row.session_id }),
    agentId: row.agent_id,
    status: row.status as RunStatus,
    version: Number(row.version),
    snapshot,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ...(row.labels === null ? {} : { labels: parseJsonb(row.labels) as Record<string, string> }),
    ...(row.owner === null || row.owner === undefined ? {} : { owner: row.owner }),
  };
}

/**
 * A run's member rows (snapshot-rows.ts) as a JSON array of `[member, index, value]`, for the
 * select list of a statement that reads the run row `r`: head and rows come from one statement,
 * so from one snapshot of the database. Read in two, a save landing between them paired a head
 * with rows of another version ("messages should have 17 rows, the store has 18").
 */
export function memberRowsColumn(schema: string): string {
  return `(SELECT json_agg(json_build_array(m.member, m.idx, m.value::text) ORDER BY m.member, m.idx)::text
     FROM ${schema}.run_rows m WHERE m.run_id = r.run_id) AS member_rows`;
}

/** A run from its row, read with {@link memberRowsColumn}: the snapshot joined with its member rows. */
export function runFromRow(row: RunRow & { member_rows?: string | null }): StoredRun {
  const head = parseJsonb(row.snapshot!);
  if (!hasMarkers(head) || !row.member_rows) return toStoredRun(row, joinSnapshot(head, undefined));
  const stored = JSON.parse(row.member_rows) as [string, number, string][];
  const members = groupRows(
    stored.map(([member, index, value]) => ({ runId: row.run_id, member, index, value: parseJsonb(value) })),
  );
  return toStoredRun(row, joinSnapshot(head, members.get(row.run_id)));
}
