/**
 * Issue 12, defect 1: a function, symbol or Proxy in a planner result or a tool result crashed the
 * process on the default memory store (the persister's copy threw outside its try). Such a value
 * is refused where it enters, for that run only; the other runs and the runtime go on.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { testRuntime } from '../run-fixtures.ts';

const hostileTool = (result: () => unknown) =>
  defineTool({
    id: 'x.hostile',
    description: 'Returns what JSON cannot carry',
    input: z.object({}),
    execute: async () => result(),
  });

describe('a value JSON cannot carry', () => {
  it('in a planner final response fails that run with a clear error; the runtime goes on', async () => {
    const runtime = testRuntime({
      planner: scriptedPlanner([{ finalResponse: { text: 'hi', data: { cb: () => 1 } } }]),
    });
    const bad = await runtime.start({ messages: [] }).result();
    expect(bad.status).toBe('failed');
    expect(bad.error?.message).toContain('finalResponse.data.cb: a function is not JSON');

    const fine = testRuntime({ planner: scriptedPlanner([{ finalResponse: { text: 'ok' } }]) });
    expect((await fine.start({ messages: [] }).result()).status).toBe('completed');
    await runtime.close();
  });

  it.each([
    ['a function', () => ({ f: () => 1 }), 'f: a function is not JSON'],
    ['a symbol', () => ({ s: Symbol('x') }), 's: a symbol is not JSON'],
    ['a BigInt', () => ({ n: 10n }), 'n: a bigint is not JSON'],
    [
      'a cycle',
      () => {
        const a: Record<string, unknown> = {};
        a.self = a;
        return a;
      },
      'self: a cyclic value is not JSON',
    ],
  ])('in a tool result (%s) becomes malformed_response for that call', async (_, value, message) => {
    const runtime = testRuntime({
      planner: scriptedPlanner([
        { toolCalls: [{ name: 'x.hostile', input: {} }] },
        { finalResponse: { text: 'done' } },
      ]),
      tools: [hostileTool(value)],
    });
    const run = runtime.start({ messages: [] });
    const outcome = await run.result();
    await run.persisted();

    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]).toMatchObject({
      executed: true,
      retryHint: { reason: 'malformed_response' },
    });
    expect(outcome.toolResults[0]?.error?.message).toContain(message);
    await runtime.close();
  });

  it('in a Proxy tool result is read into a plain copy, never kept as the proxy', async () => {
    const target = { id: 'cus_1' };
    const proxy = new Proxy(target, {});
    const runtime = testRuntime({
      planner: scriptedPlanner([
        { toolCalls: [{ name: 'x.hostile', input: {} }] },
        { finalResponse: { text: 'done' } },
      ]),
      tools: [hostileTool(() => proxy)],
    });
    const outcome = await runtime.start({ messages: [] }).result();
    expect(outcome.toolResults[0]?.result).toEqual({ id: 'cus_1' });
    expect(outcome.toolResults[0]?.result).not.toBe(proxy);
    expect(() => structuredClone(outcome.toolResults[0]?.result)).not.toThrow();
  });
});
