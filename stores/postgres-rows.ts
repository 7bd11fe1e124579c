/**
 * The PostgreSQL run store's row codec (`postgres-store.ts`): the columns it reads, a runs row
 * back as a {@link StoredRun} (its snapshot joined with its member rows, snapshot-rows.ts), and
 * member rows as `unnest` parameters. Values are jsonb text (`jsonb-value.ts`).
 *
 * @module
 */

import { fromJsonb, toJsonbText } from './jsonb-value.ts';
import type { RunStatus, StoredRun } from './run-store.ts';
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
 * Member rows as parallel arrays for `unnest`: the rows to upsert (member, index, jsonb text),
 * and the trimmed members (member, index from which their other rows go).
 */
export function rowParams(rows: readonly MemberRows[]): {
  members: string[];
  indexes: number[];
  values: string[];
  trimmed: string[];
  trimFrom: number[];
} {
  const params = {
    members: [] as string[],
    indexes: [] as number[],
    values: [] as string[],
    trimmed: [] as string[],
    trimFrom: [] as number[],
  };
  for (const { member, trimFrom, rows: memberRows } of rows) {
    if (trimFrom !== undefined) {
      params.trimmed.push(member);
      params.trimFrom.push(trimFrom);
    }
    for (const [index, value] of memberRows) {
      params.members.push(member);
      params.indexes.push(index);
      params.values.push(toJsonbText(value));
    }
  }
  return params;
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
