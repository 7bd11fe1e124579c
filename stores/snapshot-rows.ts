/**
 * Durable steps that cost O(change), not O(run) (docs/durability.md §Appended rows).
 *
 * A run's snapshot grows with the run: its transcript (`context.messages`) and its hints
 * (`context.hints`) gain entries at every step and never lose or change one. Writing the whole
 * snapshot at every step therefore costs O(n) per step and O(n²) per run (issue 17 measured a
 * SQLite step at 1,290 µs after 10 steps and 3,806 µs after 500). A batch of tool calls does the
 * same within one step: every tool result is a save, and each wrote the whole batch again, its
 * calls and every result so far (issue 36 item 5: ~3 MB a save, ~100 saves, for 10,000 calls).
 * The SQL stores keep these members ({@link ROW_MEMBERS}) as rows of their own, and the snapshot
 * row holds a marker in their place:
 *
 * ```json
 * { "value": "executing", "context": { "messages": { "$toolwarden.rows": 21 }, ...,
 *   "batch": { "pending": { "$toolwarden.rows": 4000 }, "results": { "$toolwarden.rows": 4000 }, "lastResults": [], ... } },
 *   ..., "$toolwarden.rows": 1 }
 * ```
 *
 * A save writes only the rows that changed since the store's own previous save of that run (see
 * {@link RowMode}), and rewrites the (small) rest of the snapshot. Restore = the snapshot row +
 * its rows.
 *
 * "Changed since" is decided by identity, never equality: the run context is immutable (XState's
 * assigns build new objects and keep unchanged ones), so an entry that is the very same object
 * at the same index as the store wrote last time is unchanged. Anything else (the first
 * save after a load or a claim, a member rebuilt by the app, a store that did not write the
 * previous version) writes the member's rows afresh: correct, and O(n) once.
 *
 * Snapshots without these members (anything not shaped like a run, snapshots written before rows
 * existed) are stored and loaded whole, unchanged; a batch member in the head (empty, or stored
 * before batches were kept apart) is loaded as it is.
 *
 * @module
 */

/**
 * How a member's rows are written and read back:
 *
 * | mode       | rows                                   | a save writes                                        |
 * |------------|----------------------------------------|------------------------------------------------------|
 * | `appended` | one per entry, index order             | the entries after those it wrote last                |
 * | `slots`    | one per entry that is not `null`, by index; the latest row of an index wins | the entries replaced since it wrote last, at their index |
 * | `whole`    | one, index 0: the whole array          | the array, when it is not the one it wrote last      |
 *
 * `slots` is for a batch's results: aligned with its calls, `null` until each call is done, done
 * in any order (parallel calls). `whole` is for lists replaced, never changed, while a batch runs
 * (its calls; the results handed on): one row costs one encoding, ~2.3× less than a row per entry
 * (10,000 calls: ~16 ms against ~38 ms of CPU on SQLite, measured 2026-12-02).
 */
export type RowMode = 'appended' | 'slots' | 'whole';

/** A snapshot member kept as rows: its name as stored, where it is, how it is written. */
export interface RowMember {
  name: string;
  /** `context`: `context[name]`; `batch`: `context.batch[name]`. */
  parent: 'context' | 'batch';
  mode: RowMode;
  /**
   * Kept as rows only while it is a non-empty array; else in the head as it is (empty, or in
   * snapshots written before the member was kept apart, issue 36 item 5). A required member
   * (`optional: false`) is a marker in every split head.
   */
  optional: boolean;
}

/**
 * The members of a run snapshot kept as rows, in `kind` order (SQLite's log numbers them 1, 2,
 * …: never reorder, append). The batch's members (issue 36 item 5): every tool result of a
 * batch is a save, and with the batch in the head each wrote the whole batch again (O(calls)
 * bytes a save, O(calls²) a batch).
 */
export const ROW_MEMBERS: readonly RowMember[] = [
  { name: 'messages', parent: 'context', mode: 'appended', optional: false },
  { name: 'hints', parent: 'context', mode: 'appended', optional: false },
  { name: 'pending', parent: 'batch', mode: 'whole', optional: true },
  { name: 'results', parent: 'batch', mode: 'slots', optional: true },
  { name: 'lastResults', parent: 'batch', mode: 'whole', optional: true },
  { name: 'newResults', parent: 'batch', mode: 'whole', optional: true },
];

const MARKER = '$toolwarden.rows';
/**
 * In a `whole` member's marker: the member it is the very same array as (`newResults` is the
 * batch's results handed on, `lastResults`, until the policies have reviewed them): no rows of
 * its own, loaded as that member's array. A save in `resuming.policies` wrote the results twice.
 */
const SAME = '$toolwarden.same';
const FINISHED = new Set(['completed', 'failed', 'canceled']);

/** One row to write: the member's entry `index` (its slot; 0 for a `whole` member) and its value. */
export type MemberRow = [index: number, value: unknown];

/** Rows to write for one member in a save. */
export interface MemberRows {
  /** A {@link ROW_MEMBERS} name. */
  member: string;
  /**
   * Stored rows of the member at this index and beyond go first (a member rewritten, replaced,
   * emptied or shortened); `undefined` when none go (it grew, or slots were filled).
   */
  trimFrom: number | undefined;
  /** The rows to write, in order (JSON values, not yet encoded). */
  rows: MemberRow[];
}

/** A snapshot prepared for a SQL store: the row to write and the member rows that go with it. */
export interface SplitSnapshot {
  /** The snapshot with each member kept apart replaced by its marker (the whole snapshot when unsplit). */
  head: unknown;
  rows: MemberRows[];
}

/** What a save left in the store of each member: the array kept as rows, or `undefined` (in the head). */
interface Written {
  version: number;
  members: Map<string, readonly unknown[] | undefined>;
}

/** The members a run's previous save wrote, by run: what the next save writes the change of. */
export class RowTracker {
  private readonly runs = new Map<string, Written>();

  /** At most this many runs are remembered (oldest forgotten first: their next save rewrites). */
  constructor(private readonly capacity = 10_000) {}

  /**
   * Splits `snapshot` for a write at `version` (1 for a create). `previousVersion` is the version
   * the write replaces, `undefined` for a create (nothing is stored yet: nothing to trim).
   */
  split(runId: string, snapshot: unknown, previousVersion: number | undefined): SplitSnapshot {
    const found = membersOf(snapshot);
    if (found === undefined) return { head: snapshot, rows: [] };
    const { members, aliases } = found;
    const written = previousVersion === undefined ? undefined : this.runs.get(runId);
    const known = written?.version === previousVersion ? written : undefined;
    const rows: MemberRows[] = [];
    const context: Record<string, unknown> = {};
    const batch: Record<string, unknown> = {};
    let batched = false;
    for (const member of ROW_MEMBERS) {
      const entries = members.get(member.name);
      // Nothing is stored before a create; rows of unknown arrays may be, after a load or a claim.
      const before =
        previousVersion === undefined
          ? undefined
          : known === undefined
            ? UNKNOWN
            : known.members.get(member.name);
      const same = aliases.get(member.name);
      const change =
        entries === undefined || same !== undefined ? emptied(before) : changeOf(member, before, entries);
      if (change !== undefined) rows.push({ member: member.name, ...change });
      if (entries === undefined) continue;
      const marker =
        same === undefined ? { [MARKER]: entries.length } : { [MARKER]: entries.length, [SAME]: same };
      if (member.parent === 'context') context[member.name] = marker;
      else {
        batch[member.name] = marker;
        batched = true;
      }
    }
    const snap = snapshot as { context: Record<string, unknown> };
    const head: Record<string, unknown> = { ...snap.context, ...context };
    if (batched) head.batch = { ...(snap.context.batch as Record<string, unknown>), ...batch };
    return { head: { ...snap, context: head, [MARKER]: 1 }, rows };
  }

  /** Records an accepted write of `snapshot` at `version`. */
  written(runId: string, snapshot: unknown, version: number, finished: boolean): void {
    const found = membersOf(snapshot);
    this.runs.delete(runId);
    if (found === undefined || finished) return;
    // A member stored as the same as another has no rows of its own.
    for (const name of found.aliases.keys()) found.members.set(name, undefined);
    this.runs.set(runId, { version, members: found.members });
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

/** A member the store may hold rows of without this store knowing which (none written here yet). */
const UNKNOWN: readonly unknown[] = Object.freeze([]);

/** An optional member now in the head: its rows go, if it may have any. */
function emptied(before: readonly unknown[] | undefined): Omit<MemberRows, 'member'> | undefined {
  return before === undefined ? undefined : { trimFrom: 0, rows: [] };
}

/** What to write of a member now kept as `entries`, its stored rows being `before`'s. */
function changeOf(
  member: RowMember,
  before: readonly unknown[] | undefined,
  entries: readonly unknown[],
): Omit<MemberRows, 'member'> | undefined {
  // No rows of it (a create, or it was in the head) need no trim; rows of an unknown array do.
  const fresh = before === undefined;
  const rewrite = before === UNKNOWN ? { trimFrom: 0 } : { trimFrom: undefined };
  if (member.mode === 'whole') {
    if (before === entries) return undefined;
    return { trimFrom: fresh ? undefined : 0, rows: [[0, entries]] };
  }
  if (member.mode === 'slots') {
    if (fresh || before === UNKNOWN) return { ...rewrite, rows: filledSlots(entries, 0) };
    if (before === entries) return undefined;
    const rows: MemberRow[] = [];
    const common = Math.min(before.length, entries.length);
    // The latest row of a slot wins: a slot replaced (by a value or by null) gets a new row.
    for (let index = 0; index < common; index++) {
      if (before[index] !== entries[index]) rows.push([index, entries[index]]);
    }
    rows.push(...filledSlots(entries, common));
    return { trimFrom: entries.length < before.length ? entries.length : undefined, rows };
  }
  if (fresh || before === UNKNOWN) return { ...rewrite, rows: entriesFrom(entries, 0) };
  if (!isPrefix(before, entries)) return { trimFrom: 0, rows: entriesFrom(entries, 0) };
  return before.length === entries.length
    ? undefined
    : { trimFrom: undefined, rows: entriesFrom(entries, before.length) };
}

function entriesFrom(entries: readonly unknown[], from: number): MemberRow[] {
  const rows: MemberRow[] = new Array(entries.length - from);
  for (let index = from; index < entries.length; index++) rows[index - from] = [index, entries[index]];
  return rows;
}

/** The slots from `from` on that hold a value (a `null` slot has no row: it reads back as `null`). */
function filledSlots(entries: readonly unknown[], from: number): MemberRow[] {
  const rows: MemberRow[] = [];
  for (let index = from; index < entries.length; index++) {
    if (entries[index] !== null) rows.push([index, entries[index]]);
  }
  return rows;
}

/** Rows read back of one run: by member, its entries by index (a later row of an index replaced the earlier). */
export type RunRows = ReadonlyMap<string, MemberEntries>;

/** A member's rows read back: `entries[index]`, and how many indexes have a row. */
export interface MemberEntries {
  entries: unknown[];
  count: number;
}

/**
 * The stored snapshot made whole again: each member marker replaced by its rows (`rows`, by
 * member); members in the head (inline, as snapshots written before they were kept apart have
 * them) are kept as they are.
 *
 * @throws Error when a member's rows do not match its marker (a damaged database): an `appended`
 * member with an index missing or more rows than counted, a `slots` member with a row past its
 * length, a `whole` member without its one row of that length.
 */
export function joinSnapshot(head: unknown, rows: RunRows | undefined): unknown {
  if (!hasMarkers(head)) return head;
  const { [MARKER]: _, ...rest } = head as { context: Record<string, unknown>; [MARKER]?: number };
  const context = { ...rest.context };
  const batch = isPlainObject(context.batch) ? { ...(context.batch as Record<string, unknown>) } : undefined;
  for (const member of ROW_MEMBERS) {
    const parent = member.parent === 'context' ? context : batch;
    const marker = parent?.[member.name];
    if (!isMarker(marker)) continue;
    const { [MARKER]: length, [SAME]: same } = marker as { [MARKER]: number; [SAME]?: unknown };
    parent![member.name] =
      same === undefined
        ? joined(member, length, rows?.get(member.name))
        : sameAs(member, length, same, parent!);
  }
  if (batch !== undefined) context.batch = batch;
  return { ...rest, context };
}

/** A member stored as the same array as `same`, an earlier member of `parent` (already joined). */
function sameAs(
  member: RowMember,
  length: number,
  same: unknown,
  parent: Record<string, unknown>,
): unknown[] {
  const target = ROW_MEMBERS.find(({ name, parent: where }) => name === same && where === member.parent);
  const value = target === undefined || target === member ? undefined : parent[target.name];
  if (!Array.isArray(value) || value.length !== length) {
    throw new Error(
      `Stored run snapshot is damaged: "${member.name}" should be "${String(same)}" of ${length} entries, the store has ${Array.isArray(value) ? value.length : 'none'}`,
    );
  }
  return value;
}

function joined(member: RowMember, length: number, stored: MemberEntries | undefined): unknown[] {
  const entries = stored?.entries ?? [];
  const count = stored?.count ?? 0;
  const damaged = (has: string) =>
    new Error(
      `Stored run snapshot is damaged: "${member.name}" should have ${length} ${member.mode === 'whole' ? 'entries in its row' : 'rows'}, the store has ${has}`,
    );
  if (member.mode === 'whole') {
    const value = entries[0];
    if (count !== 1 || entries.length !== 1 || !Array.isArray(value) || value.length !== length)
      throw damaged(Array.isArray(value) && count === 1 ? String(value.length) : `${count} rows`);
    return value;
  }
  if (member.mode === 'slots') {
    if (entries.length > length) throw damaged(`a row at index ${entries.length - 1}`);
    const slots: unknown[] = new Array(length);
    for (let index = 0; index < length; index++) slots[index] = index in entries ? entries[index] : null;
    return slots;
  }
  if (count !== length || entries.length !== length) throw damaged(String(count));
  return entries;
}

/** Whether a stored snapshot row has members kept as rows (so its rows must be read). */
export function hasMarkers(head: unknown): boolean {
  if (typeof head !== 'object' || head === null || (head as Record<string, unknown>)[MARKER] !== 1)
    return false;
  const context = (head as { context?: unknown }).context;
  if (typeof context !== 'object' || context === null) return false;
  return ROW_MEMBERS.every(
    ({ name, optional }) => optional || isMarker((context as Record<string, unknown>)[name]),
  );
}

function isMarker(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as Record<string, unknown>)[MARKER] === 'number'
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The members of a run-shaped snapshot (every required member an array) that go to rows, by
 * name (optional ones only when non-empty arrays), and the `whole` ones that are the very same
 * array as an earlier `whole` member (`aliases`: name → that member's); `undefined` when it is
 * not run-shaped.
 */
function membersOf(
  snapshot: unknown,
): { members: Map<string, readonly unknown[] | undefined>; aliases: Map<string, string> } | undefined {
  if (!isPlainObject(snapshot)) return undefined;
  const context = snapshot.context;
  if (!isPlainObject(context)) return undefined;
  const batch = isPlainObject(context.batch) ? context.batch : undefined;
  const members = new Map<string, readonly unknown[] | undefined>();
  const aliases = new Map<string, string>();
  const wholes = new Map<readonly unknown[], string>();
  for (const { name, parent, optional, mode } of ROW_MEMBERS) {
    const value = parent === 'context' ? context[name] : batch?.[name];
    if (!optional) {
      if (!Array.isArray(value)) return undefined;
      members.set(name, value);
      continue;
    }
    const entries = Array.isArray(value) && value.length > 0 ? value : undefined;
    members.set(name, entries);
    if (entries === undefined || mode !== 'whole') continue;
    const same = wholes.get(entries);
    if (same === undefined) wholes.set(entries, name);
    else aliases.set(name, same);
  }
  return { members, aliases };
}

function isPrefix(before: readonly unknown[], now: readonly unknown[]): boolean {
  if (before.length > now.length) return false;
  for (let i = 0; i < before.length; i++) if (before[i] !== now[i]) return false;
  return true;
}

/**
 * Groups rows read back (`member`, `index`, value), in write order, by run and member: each at
 * its index, a later row of an index replacing an earlier one (a `slots` member's).
 */
export function groupRows(
  rows: Iterable<{ runId: string; member: string; index: number; value: unknown }>,
): Map<string, Map<string, MemberEntries>> {
  const byRun = new Map<string, Map<string, MemberEntries>>();
  for (const row of rows) {
    let members = byRun.get(row.runId);
    if (members === undefined) {
      members = new Map();
      byRun.set(row.runId, members);
    }
    let member = members.get(row.member);
    if (member === undefined) {
      member = { entries: [], count: 0 };
      members.set(row.member, member);
    }
    if (!(row.index in member.entries)) member.count++;
    member.entries[row.index] = row.value;
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
