import { describe, expect, it } from 'vitest';
import {
  MAX_CAUSE_DEPTH,
  RateLimitedError,
  ToolError,
  ToolErrorJSONSchema,
  ToolTimeoutError,
  ToolUnavailableError,
} from './tool-error.ts';

describe('ToolError', () => {
  it('is an Error with name ToolError, a message, and recoverable false unless told', () => {
    const error = new ToolError('lookup failed');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ToolError');
    expect(error.message).toBe('lookup failed');
    expect(error.recoverable).toBe(false);
    expect(new ToolError('fix the email', { recoverable: true }).recoverable).toBe(true);
  });

  it('converts a plain Error cause into a ToolError cause', () => {
    const error = new ToolError('profile not saved', { cause: new RangeError('plan out of range') });
    expect(error.cause).toBeInstanceOf(ToolError);
    expect(error.cause).toMatchObject({
      name: 'RangeError',
      message: 'plan out of range',
      recoverable: false,
    });
  });

  it('keeps a ToolError cause as the same object', () => {
    const inner = new ToolError('inner', { recoverable: true });
    expect(new ToolError('outer', { cause: inner }).cause).toBe(inner);
  });
});

describe('ToolError.from', () => {
  it('returns a ToolError unchanged', () => {
    const error = new ToolError('already wrapped');
    expect(ToolError.from(error)).toBe(error);
  });

  it('keeps the class name, the message, the stack, and the whole Error.cause chain', () => {
    const root = new Error('ECONNRESET');
    const middle = new Error('query failed', { cause: root });
    const top = new TypeError('db write failed', { cause: middle });
    const error = ToolError.from(top);

    expect(error.name).toBe('TypeError');
    expect(error.message).toBe('db write failed');
    expect(error.recoverable).toBe(false);
    expect(error.stack).toBe(top.stack);
    expect(error.cause?.message).toBe('query failed');
    expect(error.cause?.cause?.message).toBe('ECONNRESET');
    expect(error.cause?.cause?.cause).toBeUndefined();
  });

  it('describes thrown non-errors: strings as they are, objects as JSON', () => {
    expect(ToolError.from('quota exceeded').message).toBe('quota exceeded');
    expect(ToolError.from({ status: 503 }).message).toBe('{"status":503}');
    expect(ToolError.from(42).message).toBe('42');
    expect(ToolError.from(undefined).message).toBe('Unknown error');
    expect(ToolError.from(null).message).toBe('Unknown error');
  });

  it('describes values JSON cannot hold without throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(ToolError.from(cyclic).message).toBe('[object Object]');
    expect(ToolError.from(10n).message).toBe('10');
  });

  it('uses the class name when an Error has no message', () => {
    expect(ToolError.from(new RangeError()).message).toBe('RangeError');
  });

  it('keeps the retry data of typed errors visible through the name', () => {
    expect(ToolError.from(new RateLimitedError('429', { retryAfterMs: 10 })).name).toBe('RateLimitedError');
    expect(ToolError.from(new ToolUnavailableError('down')).name).toBe('ToolUnavailableError');
    expect(ToolError.from(new ToolTimeoutError('crm.export', 30)).message).toBe(
      'Tool crm.export did not finish within 30 ms',
    );
  });

  it('stops a cyclic cause chain at the first repeat', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.defineProperty(a, 'cause', { value: b });
    const error = ToolError.from(b);
    expect(error.toJSON()).toEqual({
      name: 'ToolError',
      message: 'b',
      recoverable: false,
      cause: { name: 'ToolError', message: 'a', recoverable: false },
    });
  });

  it('stops an Error that is its own cause', () => {
    const self = new Error('loop');
    Object.defineProperty(self, 'cause', { value: self });
    expect(ToolError.from(self).toJSON()).toEqual({ name: 'ToolError', message: 'loop', recoverable: false });
  });

  it(`cuts a chain longer than ${MAX_CAUSE_DEPTH} links with a truncation marker`, () => {
    let error: Error = new Error('link 0');
    for (let i = 1; i < 100; i++) error = new Error(`link ${i}`, { cause: error });
    const messages: string[] = [];
    for (let at: ToolError | undefined = ToolError.from(error); at; at = at.cause) messages.push(at.message);
    expect(messages).toHaveLength(MAX_CAUSE_DEPTH + 1);
    expect(messages[0]).toBe('link 99');
    expect(messages[MAX_CAUSE_DEPTH - 1]).toBe(`link ${100 - MAX_CAUSE_DEPTH}`);
    expect(messages[MAX_CAUSE_DEPTH]).toBe('(cause chain truncated)');
  });

  it('never throws, even for an Error whose message getter throws', () => {
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('nope');
      },
    });
    expect(ToolError.from(hostile).message).toBe('Error');
  });
});

describe('ToolError.toJSON / fromJSON', () => {
  it('serializes the cause chain and JSON.stringify uses it', () => {
    const error = ToolError.from(new TypeError('db write failed', { cause: new Error('connection reset') }));
    const json = {
      name: 'TypeError',
      message: 'db write failed',
      recoverable: false,
      cause: { name: 'ToolError', message: 'connection reset', recoverable: false },
    };
    expect(error.toJSON()).toEqual(json);
    expect(JSON.parse(JSON.stringify(error))).toEqual(json);
    expect(ToolErrorJSONSchema.parse(error.toJSON())).toEqual(json);
  });

  it('round-trips through fromJSON with names, messages, recoverable flags and causes', () => {
    const original = new ToolError('Argument validation failed for crm.upsert_profile: plan missing', {
      recoverable: true,
      cause: new ToolError('retry 1 failed', { cause: new RangeError('plan out of range') }),
    });
    const rebuilt = ToolError.fromJSON(JSON.parse(JSON.stringify(original)));

    expect(rebuilt).toBeInstanceOf(ToolError);
    expect(rebuilt.recoverable).toBe(true);
    expect(rebuilt.cause).toBeInstanceOf(ToolError);
    expect(rebuilt.cause?.cause?.name).toBe('RangeError');
    expect(rebuilt.toJSON()).toEqual(original.toJSON());
  });

  it('terminates on a cyclic ToolError chain', () => {
    const first = new ToolError('first');
    const second = new ToolError('second', { cause: first });
    Object.defineProperty(first, 'cause', { value: second });
    expect(second.toJSON()).toEqual({
      name: 'ToolError',
      message: 'second',
      recoverable: false,
      cause: { name: 'ToolError', message: 'first', recoverable: false },
    });
  });

  it('cuts a long chain of wrapped ToolErrors (a long repair chain) when serializing', () => {
    let error = new ToolError('attempt 0', { recoverable: true });
    for (let i = 1; i < 1_000; i++)
      error = new ToolError(`attempt ${i}`, { recoverable: true, cause: error });
    let depth = 0;
    let last: { cause?: unknown; message: string } = error.toJSON();
    for (; last.cause; depth++) last = last.cause as typeof last;
    expect(depth).toBe(MAX_CAUSE_DEPTH);
    expect(last.message).toBe('(cause chain truncated)');
  });

  it('cuts a deep JSON chain when rebuilding', () => {
    let json: { name: string; message: string; recoverable: boolean; cause?: unknown } = {
      name: 'ToolError',
      message: 'root',
      recoverable: false,
    };
    for (let i = 0; i < 10_000; i++)
      json = { name: 'ToolError', message: `m${i}`, recoverable: false, cause: json };
    const rebuilt = ToolError.fromJSON(json as Parameters<typeof ToolError.fromJSON>[0]);
    let count = 0;
    for (let at: ToolError | undefined = rebuilt; at; at = at.cause) count++;
    expect(count).toBe(MAX_CAUSE_DEPTH + 1);
  });
});

describe('typed errors thrown by execute', () => {
  it('RateLimitedError carries retryAfterMs and its cause', () => {
    const upstream = new Error('429 Too Many Requests');
    const error = new RateLimitedError('slow down', { retryAfterMs: 2_000, cause: upstream });
    expect(error).toMatchObject({ name: 'RateLimitedError', message: 'slow down', retryAfterMs: 2_000 });
    expect(error.cause).toBe(upstream);
    expect(new RateLimitedError().message).toBe('Rate limited');
  });

  it('ToolTimeoutError names the tool and the limit', () => {
    const error = new ToolTimeoutError('crm.export', 250);
    expect(error).toMatchObject({ name: 'ToolTimeoutError', toolId: 'crm.export', timeoutMs: 250 });
  });
});
