/**
 * The errors a {@link RunStore} throws, as named classes carrying the data a caller needs to
 * react (docs/durability.md; STYLE "errors are named classes"). Each has a stable `name`; catch them all
 * with `instanceof RunStoreError`.
 *
 * @module
 */

/** Base class of every error a RunStore throws on purpose. */
export class RunStoreError extends Error {
  override readonly name: string = 'RunStoreError';
}

/**
 * A `save` named a version that is no longer current: another writer (another process, or a
 * stale copy in this one) advanced the run first. Load the run again and decide from its state.
 */
export class StaleRunVersionError extends RunStoreError {
  override readonly name = 'StaleRunVersionError';
  readonly runId: string;
  /** The version the rejected save was computed from. */
  readonly expectedVersion: number;
  /** The run's version in the store when the save was rejected. */
  readonly actualVersion: number;

  constructor(runId: string, expectedVersion: number, actualVersion: number) {
    super(
      `Run "${runId}" is at version ${actualVersion}, not ${expectedVersion}: another writer saved it ` +
        'first. Load the run again before saving (optimistic concurrency, docs/durability.md).',
    );
    this.runId = runId;
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}

/**
 * `claim` was refused: another owner holds the run and its lease is live (docs/durability.md: only one
 * process can advance a run). Wait for that owner to release the run or for its lease to run
 * out (`leaseUntil`), or answer through the process that holds it.
 */
export class RunLeasedError extends RunStoreError {
  override readonly name = 'RunLeasedError';
  readonly runId: string;
  /** Who holds the run. */
  readonly owner: string;
  /** Epoch ms (store clock) until which the holder's lease is live, unless it renews it. */
  readonly leaseUntil: number;

  constructor(runId: string, owner: string, leaseUntil: number) {
    super(
      `Run "${runId}" is held by owner "${owner}", whose lease is live until ` +
        `${new Date(leaseUntil).toISOString()}: only the holder can advance it (docs/durability.md).`,
    );
    this.runId = runId;
    this.owner = owner;
    this.leaseUntil = leaseUntil;
  }
}

/** The run does not exist (never created, or deleted). */
export class RunNotFoundError extends RunStoreError {
  override readonly name = 'RunNotFoundError';
  readonly runId: string;

  constructor(runId: string) {
    super(`Run "${runId}" does not exist in the run store.`);
    this.runId = runId;
  }
}

/** `create` was given a run id that is already stored. */
export class RunExistsError extends RunStoreError {
  override readonly name = 'RunExistsError';
  readonly runId: string;

  constructor(runId: string) {
    super(`Run "${runId}" already exists in the run store.`);
    this.runId = runId;
  }
}

/**
 * The store could not do the operation: its database is unreachable, dead, locked past the busy
 * timeout, or the store was closed. `cause` is the driver's error. Nothing was changed in the
 * caller's memory; see {@link RunStore} for how to retry a write.
 */
export class RunStoreUnavailableError extends RunStoreError {
  override readonly name = 'RunStoreUnavailableError';
  /** Which store, e.g. `sqlite run store (file:///var/runs.db)`; never contains a password. */
  readonly store: string;
  /** The RunStore method that failed, e.g. `save`. */
  readonly operation: string;
  readonly runId?: string;
  /** The driver's error code when it has one (`ECONNREFUSED`, `SQLITE_BUSY`, `57P01`, ...). */
  readonly code?: string;

  constructor(options: { store: string; operation: string; runId?: string; cause: unknown }) {
    const code = errorCode(options.cause);
    const target =
      options.runId === undefined ? `${options.operation}()` : `${options.operation}("${options.runId}")`;
    super(`${options.store} is unavailable: ${target} failed: ${describeCause(options.cause)}`, {
      cause: options.cause,
    });
    this.store = options.store;
    this.operation = options.operation;
    if (options.runId !== undefined) this.runId = options.runId;
    if (code !== undefined) this.code = code;
  }
}

/** The store was closed; the `cause` of the RunStoreUnavailableError thrown afterwards. */
export class RunStoreClosedError extends RunStoreError {
  override readonly name = 'RunStoreClosedError';

  constructor() {
    super('the store was closed');
  }
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/**
 * One line saying what went wrong. Node reports a refused connection to a host with several
 * addresses as an AggregateError with an empty message, so the inner errors are used then.
 */
function describeCause(err: unknown): string {
  if (err instanceof AggregateError && err.message === '' && err.errors.length > 0) {
    return err.errors.map(describeCause).join('; ');
  }
  if (err instanceof Error) {
    const code = errorCode(err);
    const message = err.message || err.name;
    return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}
