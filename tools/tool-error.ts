import { z } from 'zod';

/** The JSON form of a {@link ToolError}: what crosses process boundaries and reaches the model. */
export interface ToolErrorJSON {
  name: string;
  message: string;
  recoverable: boolean;
  cause?: ToolErrorJSON;
}

export const ToolErrorJSONSchema: z.ZodType<ToolErrorJSON> = z.lazy(() =>
  z.object({
    name: z.string(),
    message: z.string(),
    recoverable: z.boolean(),
    cause: ToolErrorJSONSchema.optional(),
  }),
);

/** Longest cause chain kept; deeper (or cyclic) chains are cut so `toJSON` always terminates. */
const MAX_CAUSE_DEPTH = 16;

/**
 * A tool failure as the planner and UIs see it: a message, whether the planner can fix it, and
 * the chain of causes (seed `tool-validation-retry-hints`, "Core Types"; SPEC §2).
 *
 * JSON-serializable through {@link ToolError.toJSON}; {@link ToolError.fromJSON} rebuilds it, so
 * a ToolError survives a persisted snapshot.
 */
export class ToolError extends Error {
  override readonly name: string = 'ToolError';
  declare readonly cause?: ToolError;
  /** True when the planner can repair the call (validation, unknown tool); false for crashes. */
  readonly recoverable: boolean;

  constructor(message: string, options: { cause?: unknown; recoverable?: boolean } = {}) {
    super(message);
    this.recoverable = options.recoverable ?? false;
    if (options.cause !== undefined) {
      Object.defineProperty(this, 'cause', {
        value: toCause(options.cause, 1),
        enumerable: false,
        writable: false,
        configurable: true,
      });
    }
  }

  /**
   * Wraps anything thrown into a ToolError, keeping `Error.cause` chains (depth ≤ 16) and the
   * original class name as `name`. A ToolError is returned as is. Never throws.
   */
  static from(err: unknown): ToolError {
    if (err instanceof ToolError) return err;
    return toCause(err, 0) ?? new ToolError('Unknown error');
  }

  /** Rebuilds a ToolError (with its causes) from its JSON form. */
  static fromJSON(json: ToolErrorJSON): ToolError {
    const error = new ToolError(json.message, {
      recoverable: json.recoverable,
      cause: json.cause ? ToolError.fromJSON(json.cause) : undefined,
    });
    if (json.name !== 'ToolError') Object.defineProperty(error, 'name', { value: json.name });
    return error;
  }

  toJSON(): ToolErrorJSON {
    const json: ToolErrorJSON = { name: this.name, message: this.message, recoverable: this.recoverable };
    if (this.cause) json.cause = this.cause.toJSON();
    return json;
  }
}

function toCause(err: unknown, depth: number): ToolError | undefined {
  if (err === undefined || err === null) return undefined;
  if (err instanceof ToolError) return err;
  if (depth > MAX_CAUSE_DEPTH) return new ToolError('(cause chain truncated)');
  if (err instanceof Error) {
    const wrapped = new ToolError(err.message || err.name, {
      recoverable: false,
      cause: err.cause === err ? undefined : toCauseOrUndefined(err.cause, depth + 1),
    });
    if (err.name && err.name !== 'Error') Object.defineProperty(wrapped, 'name', { value: err.name });
    return wrapped;
  }
  return new ToolError(describe(err));
}

function toCauseOrUndefined(err: unknown, depth: number): ToolError | undefined {
  return err === undefined ? undefined : toCause(err, depth);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Thrown by a tool's `execute` when an upstream service rate-limited it; the boundary turns it
 * into a `rate_limited` RetryHint carrying `retryAfterMs` (SPEC §3).
 */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  /** How long to wait before retrying, in milliseconds, when the service said. */
  readonly retryAfterMs?: number;
  constructor(message = 'Rate limited', options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Thrown by a tool's `execute` when its backing service is down; becomes `tool_unavailable`. */
export class ToolUnavailableError extends Error {
  override readonly name = 'ToolUnavailableError';
}

/** The cause recorded when `execute` ran past its `timeoutMs` (SPEC §3, row `timeout`). */
export class ToolTimeoutError extends Error {
  override readonly name = 'ToolTimeoutError';
  constructor(
    readonly toolId: string,
    readonly timeoutMs: number,
  ) {
    super(`Tool ${toolId} did not finish within ${timeoutMs} ms`);
  }
}
