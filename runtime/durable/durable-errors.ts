/**
 * What the runtime reports when a run's persistence goes wrong (docs/durability.md), as named classes with
 * the data a caller needs. Both reach `onError(error, where)`, the run handle's `persisted()` and
 * `storage` (see `run-persister.ts`).
 *
 * | error                 | means                                             | the run                       |
 * |-----------------------|---------------------------------------------------|-------------------------------|
 * | `RunPersistenceError` | a write failed (the store is down, or refused it) | keeps going in memory; writes are retried, nothing dropped |
 * | `RunConflictError`    | another owner holds or advanced the run           | stopped in this process       |
 *
 * @module
 */

/**
 * Writing a run's snapshot and events failed. Nothing is lost: the run goes on in memory, the
 * newest snapshot and every event not yet written stay queued, and the runtime retries with a
 * growing delay. `cause` is the store's error (usually a `RunStoreUnavailableError`).
 */
export class RunPersistenceError extends Error {
  override readonly name = 'RunPersistenceError';
  readonly runId: string;
  /** Failed attempts in a row, this one included. */
  readonly attempts: number;
  /** Milliseconds until the next attempt. */
  readonly retryInMs: number;

  constructor(runId: string, options: { cause: unknown; attempts: number; retryInMs: number }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      `Run "${runId}" could not be saved (attempt ${options.attempts}; retrying in ${options.retryInMs} ms; ` +
        `the run goes on in memory and nothing is dropped): ${reason}`,
      { cause: options.cause },
    );
    this.runId = runId;
    this.attempts = options.attempts;
    this.retryInMs = options.retryInMs;
  }
}

/**
 * The run holds a value its store cannot write (a BigInt, a cycle, a function an app handed in
 * with an answer or its opening messages), or the store refused the write's arguments (a run id
 * over its limit: {@link isInvalidArgument}). Not an outage: retrying would never succeed, so this
 * process stops the run and reports it (issue 12 defect 3, issue 36 item 4); the store keeps the
 * last state it could save. `cause` is the store's error.
 */
export class RunValueError extends Error {
  override readonly name = 'RunValueError';
  readonly runId: string;

  constructor(runId: string, options: { cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      `Run "${runId}" holds a value the store cannot write (${reason}); this process stopped the run, and the store keeps its last saved state`,
      { cause: options.cause },
    );
    this.runId = runId;
  }
}

/**
 * Whether `error` (or an error in its cause chain) says a value cannot be serialized: what
 * `JSON.stringify` throws for a BigInt or a cycle, what `structuredClone` throws for a function.
 */
export function isValueError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e.name === 'DataCloneError') return true;
    if (e instanceof TypeError && /BigInt|circular|cyclic|could not be cloned/i.test(e.message)) return true;
  }
  return false;
}

/**
 * Whether a store refused a write for its arguments, which no retry can change (issue 36 item
 * 4): the store's own checks (`TypeError`/`RangeError` before the database: run-store-input.ts),
 * or the database refusing the data itself (PostgreSQL SQLSTATE class 22 "data exception" and
 * 54 "program limit exceeded", SQLite's `SQLITE_TOOBIG`), which reach the runtime as a
 * `RunStoreUnavailableError` with that `code`.
 */
export function isInvalidArgument(error: unknown): boolean {
  if (error instanceof TypeError || error instanceof RangeError) return true;
  if (!(error instanceof Error) || error.name !== 'RunStoreUnavailableError') return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (/^(22|54)[0-9A-Z]{3}$/.test(code) || code === 'SQLITE_TOOBIG');
}

/**
 * Another owner holds the run, or advanced it past the version this process knew (docs/durability.md:
 * only one process can advance a run). Thrown by `runtime.resume(runId)` and the by-id answer
 * methods when the run's lease is held elsewhere; reported for a hosted run whose save was
 * stale, which this process then stops (the other process has it).
 */
export class RunConflictError extends Error {
  override readonly name = 'RunConflictError';
  readonly runId: string;
  /** The owner name (`durable.owner`) of who holds the run, when known. */
  readonly owner?: string;
  /** The runtime instance that holds it (`<owner>#<instance>`, `runtime.instance`), when known. */
  readonly instance?: string;
  /** Epoch ms until which the holder's lease is live, when known. */
  readonly leaseUntil?: number;

  constructor(
    runId: string,
    message: string,
    options: { cause?: unknown; owner?: string; instance?: string; leaseUntil?: number } = {},
  ) {
    super(`Run "${runId}": ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.runId = runId;
    if (options.owner !== undefined) this.owner = options.owner;
    if (options.instance !== undefined) this.instance = options.instance;
    if (options.leaseUntil !== undefined) this.leaseUntil = options.leaseUntil;
  }
}
