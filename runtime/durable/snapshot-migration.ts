/**
 * Reading a stored run snapshot with this release's code (docs/durability.md §Upgrades, issue 36
 * item 1): its format found, migrated up to {@link SNAPSHOT_FORMAT}, checked to be a run snapshot
 * the run machine can restore.
 *
 * | stored snapshot                               | `migrateSnapshot`                              | the run                    |
 * |-----------------------------------------------|------------------------------------------------|----------------------------|
 * | format = this release's                       | the snapshot (0.1.0's legacy shapes unpacked)  | restored                   |
 * | older format, every migrator succeeds         | the migrated snapshot                          | restored                   |
 * | older format, a migrator throws               | throws {@link SnapshotMigrationError}          | restored as failed         |
 * | not a run snapshot (after migrating)          | throws {@link SnapshotMigrationError}          | restored as failed         |
 * | newer than this release                       | throws {@link SnapshotFormatTooNewError}       | refused, left in the store |
 *
 * A snapshot from a newer release is refused rather than failed: the newer release can still run
 * it, and this one must not change it (a rollback while a newer process runs). One that cannot be
 * migrated fails the run once (runtime/durable/unmigratable-run.ts), so nothing retries it.
 *
 * @module
 */

import {
  type PersistedSnapshotJson,
  SNAPSHOT_FORMAT,
  SNAPSHOT_FORMAT_KEY,
  SNAPSHOT_MIGRATORS,
  type SnapshotMigrator,
  snapshotFormatOf,
} from '../../machines/snapshot-format.ts';
import { unpackSnapshot } from './snapshot-codec.ts';

/**
 * A stored run snapshot this release cannot bring to its format: a migrator threw, or the result
 * is not a run snapshot. The run is restored as failed with this error (`run.result()` gives
 * `{ status: 'failed', error: { name: 'SnapshotMigrationError', ... } }`); the store keeps the
 * snapshot as it was, so a release with a mended migrator can still read it.
 */
export class SnapshotMigrationError extends Error {
  override readonly name = 'SnapshotMigrationError';
  /** The format the snapshot was stored in. */
  readonly fromVersion: number;
  /** The format this release restores (its {@link SNAPSHOT_FORMAT}). */
  readonly toVersion: number;
  /** The format at which it failed: the migrator reading it threw, or (= toVersion) the check after. */
  readonly failedAt: number;
  /** What failed, in one line. */
  readonly reason: string;
  readonly runId: string | undefined;

  constructor(options: {
    runId?: string;
    fromVersion: number;
    toVersion: number;
    failedAt: number;
    reason: string;
    cause?: unknown;
  }) {
    const run =
      options.runId === undefined ? 'A stored run snapshot' : `The stored snapshot of run "${options.runId}"`;
    super(
      `${run} (format ${options.fromVersion}) cannot be restored by this release (format ${options.toVersion}): ` +
        `${options.reason} (docs/durability.md §Upgrades)`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.fromVersion = options.fromVersion;
    this.toVersion = options.toVersion;
    this.failedAt = options.failedAt;
    this.reason = options.reason;
    this.runId = options.runId;
  }
}

/**
 * A stored run snapshot written by a newer release than this one (a rollback, or an old process
 * beside upgraded ones). Refused: the run is left in the store untouched, for the newer release.
 */
export class SnapshotFormatTooNewError extends Error {
  override readonly name = 'SnapshotFormatTooNewError';
  /** The snapshot's format. */
  readonly snapshotVersion: number;
  /** The newest format this release reads (its {@link SNAPSHOT_FORMAT}). */
  readonly supportedVersion: number;
  readonly runId: string | undefined;

  constructor(options: { runId?: string; snapshotVersion: number; supportedVersion: number }) {
    const run = options.runId === undefined ? 'A stored run snapshot' : `Run "${options.runId}"`;
    super(
      `${run} was stored in snapshot format ${options.snapshotVersion}, newer than this release reads ` +
        `(format ${options.supportedVersion}): resume it with the release that wrote it or a later one ` +
        '(docs/durability.md §Upgrades). The stored run is left as it is.',
    );
    this.snapshotVersion = options.snapshotVersion;
    this.supportedVersion = options.supportedVersion;
    this.runId = options.runId;
  }
}

/** Options of {@link migrateSnapshot}: the defaults are this release's. */
export interface MigrateSnapshotOptions {
  /** Names the run in errors. */
  runId?: string;
  /** The migrators, in format order (tests give their own). Default {@link SNAPSHOT_MIGRATORS}. */
  migrators?: readonly SnapshotMigrator[];
}

/**
 * The stored snapshot `stored` in this release's format, ready for `createActor(machine, {
 * snapshot })`: migrated by each migrator from its format up, then checked to be a run snapshot
 * (an object with a state `value`, a `status`, and a context with `runId`, `messages`, `batch`,
 * `flow`). The result carries `$toolwarden.format` = the current format. `stored` is never
 * changed; a snapshot already current (the common case) is returned as it is.
 *
 * @throws SnapshotFormatTooNewError when `stored` is newer than this release.
 * @throws SnapshotMigrationError when a migrator throws, the format member is not a positive
 *   integer, or the result is not a run snapshot.
 */
export function migrateSnapshot(
  stored: unknown,
  options: MigrateSnapshotOptions = {},
): PersistedSnapshotJson {
  const migrators = options.migrators ?? SNAPSHOT_MIGRATORS;
  const current = migrators.length + 1;
  const from = snapshotFormatOf(stored);
  const failure = (failedAt: number, reason: string, cause?: unknown) =>
    new SnapshotMigrationError({
      ...(options.runId === undefined ? {} : { runId: options.runId }),
      fromVersion: from,
      toVersion: current,
      failedAt,
      reason,
      cause,
    });
  if (Number.isNaN(from)) {
    throw failure(
      Number.NaN,
      `its ${SNAPSHOT_FORMAT_KEY} is ${JSON.stringify((stored as PersistedSnapshotJson)[SNAPSHOT_FORMAT_KEY])}, not a positive integer`,
    );
  }
  if (from > current) {
    throw new SnapshotFormatTooNewError({
      ...(options.runId === undefined ? {} : { runId: options.runId }),
      snapshotVersion: from,
      supportedVersion: current,
    });
  }
  let snapshot: unknown = stored;
  if (from === 1) {
    // Format 1 also covers the shapes stored before 0.1.0 (packed children, per-step actors).
    try {
      snapshot = unpackSnapshot(snapshot);
    } catch (error) {
      throw failure(1, `its format-1 child actors do not unpack: ${messageOf(error)}`, error);
    }
  }
  for (let version = from; version < current; version++) {
    const migrator = migrators[version - 1]!;
    if (migrator.from !== version) {
      throw failure(version, `the migrator registered for format ${version} reads format ${migrator.from}`);
    }
    try {
      snapshot = migrator.migrate(snapshot as PersistedSnapshotJson);
    } catch (error) {
      throw failure(
        version,
        `migrating format ${version} → ${version + 1} (${migrator.change}) failed: ${messageOf(error)}`,
        error,
      );
    }
  }
  const problem = runSnapshotProblem(snapshot);
  if (problem !== undefined) throw failure(current, `it is not a run snapshot: ${problem}`);
  const result = snapshot as PersistedSnapshotJson;
  return result[SNAPSHOT_FORMAT_KEY] === current ? result : { ...result, [SNAPSHOT_FORMAT_KEY]: current };
}

/**
 * The stored snapshot's context for reading (what a run awaits, its transcript), or `undefined`
 * when this release cannot read the snapshot (too new, or not migratable): `runtime.list()`,
 * `runtime.load()` and recovery must not fail on one such run.
 */
export function readableContext<C>(stored: unknown): C | undefined {
  try {
    return migrateSnapshot(stored).context as C;
  } catch (error) {
    if (error instanceof SnapshotMigrationError || error instanceof SnapshotFormatTooNewError)
      return undefined;
    throw error;
  }
}

/** What makes `snapshot` no run snapshot, or `undefined` when it is one. */
function runSnapshotProblem(snapshot: unknown): string | undefined {
  if (!isObject(snapshot)) return `it is ${snapshot === null ? 'null' : typeof snapshot}, not an object`;
  const run = snapshot as PersistedSnapshotJson;
  if (!['active', 'done', 'error', 'stopped'].includes(run.status as string))
    return `its status is ${JSON.stringify(run.status)}`;
  if (typeof run.value !== 'string' && !isObject(run.value)) return 'it has no state value';
  const context = run.context as Record<string, unknown> | undefined;
  if (!isObject(context)) return 'it has no context';
  if (typeof context.runId !== 'string') return 'its context has no runId';
  if (!Array.isArray(context.messages)) return 'its context has no messages';
  if (!isObject(context.batch)) return 'its context has no batch';
  if (!isObject(context.flow)) return 'its context has no flow';
  return undefined;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export { SNAPSHOT_FORMAT };
