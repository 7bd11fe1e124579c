/**
 * Durable steps that cost O(change), not O(transcript) (docs/durability.md §Appended rows).
 *
 * A run's snapshot grows with the run: its transcript (`context.messages`) and its hints
 * (`context.hints`) gain entries at every step and never lose or change one. Writing the whole
 * snapshot at every step therefore costs O(n) per step and O(n²) per run (issue 17 measured a
 * SQLite step at 1,290 µs after 10 steps and 3,806 µs after 500). The SQL stores keep these
 * append-only members as rows of their own, one per entry, and the snapshot row holds a marker in
 * their place:
 *
 * ```json
 * { "value": "planning", "context": { "messages": { "$toolwarden.rows": 21 }, ... }, ..., "$toolwarden.rows": 1 }
 * ```
 *
 * A save appends only the entries added since the store's own previous save of that run, and
 * rewrites the (small) rest of the snapshot. Restore = the snapshot row + its rows, in order.
 *
 * "Added since" is decided by identity, never equality: the run context is immutable (XState's
 * assigns build new objects and keep unchanged ones), so when every entry the store wrote last
 * time is the very same object at the same index, only the tail is new. Anything else (the first
 * save after a load or a claim, a member rebuilt by the app, a store that did not write the
 * previous version) writes the member's rows afresh: correct, and O(n) once.
 *
 * Snapshots without these members (anything not shaped like a run, snapshots written before rows
 * existed) are stored and loaded whole, unchanged.
 *
 * @module
 */

/** Where the append-only members of a run snapshot are, and their names as stored. */
export const ROW_MEMBERS: readonly { name: string; path: readonly [string, string] }[] = [
  { name: 'messages', path: ['context', 'messages'] },
  { name: 'hints', path: ['context', 'hints'] },
];

const MARKER = '$toolwarden.rows';
const FINISHED = new Set(['completed', 'failed', 'canceled']);

/** Rows to write for one member in a save. */
export interface MemberRows {
  /** `messages` or `hints`. */
  member: string;
  /** Index of the first row in `values`. */
  from: number;
  /** The new entries, in order (JSON values, not yet encoded). */
  values: unknown[];
  /**
   * Rows at `from + values.length` and beyond may exist and must be deleted (a rewritten or
   * shortened member). `false` when this store wrote the member last and it only grew.
   */
  trim: boolean;
}

/** A snapshot prepared for a SQL store: the row to write and the member rows that go with it. */
export interface SplitSnapshot {
  /** The snapshot with each member replaced by its marker (the whole snapshot when unsplit). */
  head: unknown;
  rows: MemberRows[];
}

interface Written {
  version: number;
  members: Map<string, readonly unknown[]>;
}

/** The entries a run's previous save wrote, by run: what the next save may append to. */
export class RowTracker {
  private readonly runs = new Map<string, Written>();

  /** At most this many runs are remembered (oldest forgotten first: their next save rewrites). */
  constructor(private readonly capacity = 10_000) {}

  /**
   * Splits `snapshot` for a write at `version` (1 for a create). `previousVersion` is the version
   * the write replaces, `undefined` for a create (every row is new).
   */
  split(runId: string, snapshot: unknown, previousVersion: number | undefined): SplitSnapshot {
    const members = membersOf(snapshot);
    if (members === undefined) return { head: snapshot, rows: [] };
    const written = previousVersion === undefined ? undefined : this.runs.get(runId);
    const current = written?.version === previousVersion ? written : undefined;
    const rows: MemberRows[] = [];
    const replaced: Record<string, unknown> = {};
    for (const { name } of ROW_MEMBERS) {
      const entries = members[name]!;
      const before = current?.members.get(name);
      const appends = before !== undefined && isPrefix(before, entries);
      const from = appends ? before.length : 0;
      rows.push({ member: name, from, values: entries.slice(from), trim: !appends });
      replaced[name] = { [MARKER]: entries.length };
    }
    const snap = snapshot as { context: Record<string, unknown> };
    return { head: { ...snap, context: { ...snap.context, ...replaced }, [MARKER]: 1 }, rows };
  }

  /** Records an accepted write of `snapshot` at `version`. */
  written(runId: string, snapshot: unknown, version: number, finished: boolean): void {
    const members = membersOf(snapshot);
    this.runs.delete(runId);
    if (members === undefined || finished) return;
    this.runs.set(runId, { version, members: new Map(Object.entries(members)) });
    if (this.runs.size > this.capacity) this.runs.delete(this.runs.keys().next().value!);
  }

  /**
   * Records an accepted save and returns the stored run with the saved snapshot, copied when
   * first read ({@link withSnapshotCopy}).
   */
  saved<T extends { version: number; snapshot: unknown }>(
    runId: string,
    update: { snapshot: unknown; status: string },
    run: T,
  ): T {
    this.written(runId, update.snapshot, run.version, FINISHED.has(update.status));
    return withSnapshotCopy(run, update.snapshot);
  }

  /** Forgets a run (deleted, or released by its owner). */
  forget(runId: string): void {
    this.runs.delete(runId);
  }
}

/**
 * The stored snapshot made whole again: each member marker replaced by its rows (`rows[member]`,
 * in index order).
 *
 * @throws Error when a member has fewer or more rows than its marker counts (a damaged database).
 */
export function joinSnapshot(head: unknown, rows: ReadonlyMap<string, unknown[]> | undefined): unknown {
  if (!hasMarkers(head)) return head;
  const { [MARKER]: _, ...rest } = head as { context: Record<string, unknown>; [MARKER]?: number };
  const context = { ...rest.context };
  for (const { name } of ROW_MEMBERS) {
    const marker = context[name] as { [MARKER]: number };
    const entries = rows?.get(name) ?? [];
    if (entries.length !== marker[MARKER]) {
      throw new Error(
        `Stored run snapshot is damaged: "${name}" should have ${marker[MARKER]} rows, the store has ${entries.length}`,
      );
    }
    context[name] = entries;
  }
  return { ...rest, context };
}

/** Whether a stored snapshot row has members kept as rows (so its rows must be read). */
export function hasMarkers(head: unknown): boolean {
  if (typeof head !== 'object' || head === null || (head as Record<string, unknown>)[MARKER] !== 1)
    return false;
  const context = (head as { context?: unknown }).context;
  if (typeof context !== 'object' || context === null) return false;
  return ROW_MEMBERS.every(({ name }) => isMarker((context as Record<string, unknown>)[name]));
}

function isMarker(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as Record<string, unknown>)[MARKER] === 'number'
  );
}

/** The members of a run-shaped snapshot (every member an array), or `undefined`. */
function membersOf(snapshot: unknown): Record<string, readonly unknown[]> | undefined {
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) return undefined;
  const context = (snapshot as { context?: unknown }).context;
  if (typeof context !== 'object' || context === null || Array.isArray(context)) return undefined;
  const members: Record<string, readonly unknown[]> = {};
  for (const { name } of ROW_MEMBERS) {
    const value = (context as Record<string, unknown>)[name];
    if (!Array.isArray(value)) return undefined;
    members[name] = value;
  }
  return members;
}

function isPrefix(before: readonly unknown[], now: readonly unknown[]): boolean {
  if (before.length > now.length) return false;
  for (let i = 0; i < before.length; i++) if (before[i] !== now[i]) return false;
  return true;
}

/** Groups rows read back (`member`, `idx`, value) by run and member, in index order. */
export function groupRows(
  rows: Iterable<{ runId: string; member: string; value: unknown }>,
): Map<string, Map<string, unknown[]>> {
  const byRun = new Map<string, Map<string, unknown[]>>();
  for (const row of rows) {
    let members = byRun.get(row.runId);
    if (members === undefined) {
      members = new Map();
      byRun.set(row.runId, members);
    }
    let entries = members.get(row.member);
    if (entries === undefined) {
      entries = [];
      members.set(row.member, entries);
    }
    entries.push(row.value);
  }
  return byRun;
}

/**
 * `run` with `snapshot` as a copy of `snapshot`, made when first read: a save's caller rarely
 * reads the snapshot it just wrote, and copying a long run's transcript at every step is the cost
 * this module removes. The copy is taken at first read (`structuredClone`).
 */
export function withSnapshotCopy<T extends { snapshot: unknown }>(run: T, snapshot: unknown): T {
  let copy: { value: unknown } | undefined;
  Object.defineProperty(run, 'snapshot', {
    enumerable: true,
    configurable: true,
    get: () => {
      copy ??= { value: structuredClone(snapshot) };
      return copy.value;
    },
    set: (value: unknown) => {
      copy = { value };
    },
  });
  return run;
}
