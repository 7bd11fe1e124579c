import { z } from 'zod';

/** The JSON form of a {@link ToolError}: what crosses process boundaries and reaches the model. */
export interface ToolErrorJSON {
  name: string;
  message: string;
  recoverable: boolean;
  cause?: ToolErrorJSON;
}

/** Schema of a ToolError in its JSON form (`toJSON()`), with its cause chain. */
export const ToolErrorJSONSchema: z.ZodType<ToolErrorJSON> = z.lazy(() =>
  z.object({
    name: z.string(),
    message: z.string(),
    recoverable: z.boolean(),
    cause: ToolErrorJSONSchema.optional(),
  }),
);

/**
 * Most links of a cause chain kept, the error itself included; a longer chain keeps its first
 * links and ends with a `(cause chain truncated)` link. Cycles end where they would repeat, so
 * `from`, `toJSON` and `fromJSON` always terminate.
 */
export const MAX_CAUSE_DEPTH = 16;

const TRUNCATED = '(cause chain truncated)';

/**
 * The brand of toolwarden's error classes, a registered symbol so every copy of this module (the
 * TypeScript sources and the built package in one process: `toolwarden mcp serve` in a checkout
 * with a config importing `'toolwarden'`, issue 25 item 7) reads the same one. Its value is the
 * class's stable name; `instanceof` would see two unrelated classes.
 */
const BRAND = Symbol.for('toolwarden.error');

function brand(cls: { prototype: object }, name: string): void {
  Object.defineProperty(cls.prototype, BRAND, { value: name, enumerable: false });
}

function branded(value: unknown, name: string): boolean {
  try {
    return value !== null && typeof value === 'object' && (value as Record<symbol, unknown>)[BRAND] === name;
  } catch {
    return false; // a hostile Proxy
  }
}

/**
 * A tool failure as the planner and UIs see it: a message, whether the planner can fix it, and
 * the chain of causes (Goa-AI's retry-hints guide, docs/sources.md §Retry hints: "Core Types"; docs/tool-boundary.md §Vocabulary).
 *
 * JSON-serializable through {@link ToolError.toJSON}; {@link ToolError.fromJSON} rebuilds it, so
 * a ToolError survives a persisted snapshot. A non-ToolError `cause` (an `Error`, or anything
 * thrown) is converted with {@link ToolError.from}.
 */
export class ToolError extends Error {
  override readonly name: string = 'ToolError';
  declare readonly cause?: ToolError;
  /** True when the planner can repair the call (validation, unknown tool); false for crashes. */
  readonly recoverable: boolean;

  constructor(message: string, options: { cause?: unknown; recoverable?: boolean } = {}) {
    super(message);
    this.recoverable = options.recoverable ?? false;
    if (options.cause !== undefined && options.cause !== null) {
      setCause(this, ToolError.is(options.cause) ? options.cause : toToolError(options.cause));
    }
  }

  /**
   * Whether `value` is a ToolError of any copy of toolwarden in the process (by its brand, a
   * `Symbol.for` key; not `instanceof`, which one copy's class fails for another's errors).
   */
  static is(value: unknown): value is ToolError {
    return branded(value, 'ToolError');
  }

  /**
   * Wraps anything thrown into a ToolError, keeping `Error.cause` chains (at most
   * {@link MAX_CAUSE_DEPTH} links; a cycle ends at the first repeat), the original class name as
   * `name`, and its stack. A ToolError is returned as is. Never throws.
   */
  static from(err: unknown): ToolError {
    if (ToolError.is(err)) return err;
    return toToolError(err);
  }

  /**
   * Rebuilds a ToolError (with its causes, at most {@link MAX_CAUSE_DEPTH} deep) from its JSON
   * form.
   */
  static fromJSON(json: ToolErrorJSON): ToolError {
    // A rebuilt error's stack would show this function, not where it was thrown: none is captured
    // (capturing one was ~30 µs an error, 0.3 s for the results of a 10,000-call batch; issue 36 item 5).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      const links: ToolErrorJSON[] = [];
      for (let at: ToolErrorJSON | undefined = json; at && links.length <= MAX_CAUSE_DEPTH; at = at.cause) {
        links.push(at);
      }
      let cause: ToolError | undefined;
      if (links.length > MAX_CAUSE_DEPTH) {
        links.pop();
        cause = new ToolError(TRUNCATED);
      }
      for (const link of links.reverse()) {
        const error = new ToolError(link.message, { recoverable: link.recoverable, cause });
        if (link.name !== 'ToolError') setName(error, link.name);
        cause = error;
      }
      return cause as ToolError;
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /** The JSON form, causes included (cut as {@link MAX_CAUSE_DEPTH} says; cycles end). */
  toJSON(): ToolErrorJSON {
    const links: ToolError[] = [];
    const seen = new Set<ToolError>();
    for (let at: ToolError | undefined = this; at && !seen.has(at); at = at.cause) {
      if (links.length > MAX_CAUSE_DEPTH) break;
      seen.add(at);
      links.push(at);
    }
    let cause: ToolErrorJSON | undefined;
    if (links.length > MAX_CAUSE_DEPTH) {
      links.pop();
      cause = { name: 'ToolError', message: TRUNCATED, recoverable: false };
    }
    for (const link of links.reverse()) {
      const json: ToolErrorJSON = { name: link.name, message: link.message, recoverable: link.recoverable };
      if (cause) json.cause = cause;
      cause = json;
    }
    return cause as ToolErrorJSON;
  }
}

function setCause(error: ToolError, cause: ToolError): void {
  Object.defineProperty(error, 'cause', {
    value: cause,
    enumerable: false,
    writable: false,
    configurable: true,
  });
}

function setName(error: ToolError, name: string): void {
  Object.defineProperty(error, 'name', {
    value: name,
    enumerable: false,
    writable: false,
    configurable: true,
  });
}

/**
 * Converts a thrown value and its `Error.cause` chain, innermost last. Stops at the first value
 * seen before (a cycle), at a ToolError (kept as is, with its own chain), or after
 * {@link MAX_CAUSE_DEPTH} links (a truncation marker ends the chain).
 */
function toToolError(err: unknown): ToolError {
  const chain: unknown[] = [];
  const seen = new Set<unknown>();
  let tail: ToolError | undefined;
  for (let at: unknown = err; at !== undefined && at !== null; at = causeOf(at)) {
    if (ToolError.is(at)) {
      tail = at;
      break;
    }
    if (seen.has(at)) break;
    if (chain.length >= MAX_CAUSE_DEPTH) {
      tail = new ToolError(TRUNCATED);
      break;
    }
    seen.add(at);
    chain.push(at);
  }
  let cause = tail;
  for (const link of chain.reverse()) cause = wrapOne(link, cause);
  return cause ?? new ToolError('Unknown error');
}

function causeOf(value: unknown): unknown {
  try {
    return value instanceof Error ? value.cause : undefined;
  } catch {
    return undefined;
  }
}

function wrapOne(value: unknown, cause: ToolError | undefined): ToolError {
  if (!(value instanceof Error)) return new ToolError(describe(value), { cause });
  const { message, name, stack } = readError(value);
  const wrapped = new ToolError(message || name || 'Error', { recoverable: false, cause });
  if (name && name !== 'Error') setName(wrapped, name);
  if (stack) wrapped.stack = stack;
  return wrapped;
}

/** An Error's fields, read defensively: a hostile getter must not make `from` throw. */
function readError(err: Error): { message: string; name: string; stack?: string } {
  const read = (key: 'message' | 'name' | 'stack'): string | undefined => {
    try {
      const value = err[key];
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  };
  return { message: read('message') ?? '', name: read('name') ?? 'Error', stack: read('stack') };
}

function describe(value: unknown): string {
  return typeof value === 'string' ? value : jsonText(value);
}

/** JSON text of a value; never throws (cycles and BigInts fall back to `String`, then to its tag). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}

/**
 * Thrown by a tool's `execute` when an upstream service rate-limited it; the boundary turns it
 * into a `rate_limited` RetryHint carrying `retryAfterMs` (docs/tool-boundary.md §Failures).
 */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  /** Whether `value` is one, from any copy of toolwarden (see {@link ToolError.is}). */
  static is(value: unknown): value is RateLimitedError {
    return branded(value, 'RateLimitedError');
  }
  /** How long to wait before retrying, in milliseconds, when the service said. */
  readonly retryAfterMs?: number;
  constructor(message = 'Rate limited', options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Thrown by a tool's `execute` when the service behind it refused the arguments the boundary let
 * through (its own checks are stricter than the schema it published: an MCP server's
 * `invalid params`); becomes `invalid_arguments`, so the planner repairs the call.
 */
export class ToolArgumentsRejectedError extends Error {
  override readonly name = 'ToolArgumentsRejectedError';
  /** Whether `value` is one, from any copy of toolwarden (see {@link ToolError.is}). */
  static is(value: unknown): value is ToolArgumentsRejectedError {
    return branded(value, 'ToolArgumentsRejectedError');
  }
}

/**
 * Thrown by a tool's `execute` when the service behind it answered something the tool cannot
 * use (an MCP server's answer over the size limit, dropped unread); becomes `malformed_response`,
 * as a result that fails the tool's `output` schema does (docs/tool-boundary.md §Failures).
 */
export class MalformedResponseError extends Error {
  override readonly name = 'MalformedResponseError';
  /** Whether `value` is one, from any copy of toolwarden (see {@link ToolError.is}). */
  static is(value: unknown): value is MalformedResponseError {
    return branded(value, 'MalformedResponseError');
  }
}

/** Thrown by a tool's `execute` when its backing service is down; becomes `tool_unavailable`. */
export class ToolUnavailableError extends Error {
  override readonly name = 'ToolUnavailableError';
  /** Whether `value` is one, from any copy of toolwarden (see {@link ToolError.is}). */
  static is(value: unknown): value is ToolUnavailableError {
    return branded(value, 'ToolUnavailableError');
  }
}

/** The cause recorded when `execute` ran past its `timeoutMs` (docs/tool-boundary.md §Failures, row `timeout`). */
export class ToolTimeoutError extends Error {
  override readonly name = 'ToolTimeoutError';
  /** Whether `value` is one, from any copy of toolwarden (see {@link ToolError.is}). */
  static is(value: unknown): value is ToolTimeoutError {
    return branded(value, 'ToolTimeoutError');
  }
  constructor(
    readonly toolId: string,
    readonly timeoutMs: number,
  ) {
    super(`Tool ${toolId} did not finish within ${timeoutMs} ms`);
  }
}

brand(ToolError, 'ToolError');
brand(RateLimitedError, 'RateLimitedError');
brand(ToolArgumentsRejectedError, 'ToolArgumentsRejectedError');
brand(ToolUnavailableError, 'ToolUnavailableError');
brand(MalformedResponseError, 'MalformedResponseError');
brand(ToolTimeoutError, 'ToolTimeoutError');
