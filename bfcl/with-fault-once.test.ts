import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callTool, defineTool, ToolCatalog } from '../tools/index.ts';
import { withFaultOnce } from './with-fault-once.ts';

const meta = { runId: 'run-1', turnId: 'turn-1', toolCallId: 'c1', agentId: 'bfcl', attempt: 1 };
const echo = defineTool({
  id: 'bfcl.echo',
  description: 'Echoes its input.',
  input: z.object({ text: z.string() }),
  timeoutMs: 20,
  execute: (input) => ({ said: input.text }),
});

describe('withFaultOnce', () => {
  it('times out the first execution, then runs the tool', async () => {
    const catalog = new ToolCatalog([withFaultOnce(echo, 'timeout')]);
    const call = { name: 'bfcl.echo', toolCallId: 'c1', input: { text: 'hi' } };

    const first = await callTool(catalog, call, { meta });
    const second = await callTool(catalog, call, { meta });

    expect(first).toMatchObject({ executed: true, retryHint: { reason: 'timeout' } });
    expect(first.error?.message).toBe('Tool bfcl.echo did not finish within 20 ms');
    expect(second).toMatchObject({ executed: true, result: { said: 'hi' } });
    expect(second.retryHint).toBeUndefined();
  });

  it('rate-limits the first execution with retryAfterMs, then runs the tool', async () => {
    const catalog = new ToolCatalog([withFaultOnce(echo, 'rate_limited', { retryAfterMs: 2_500 })]);
    const call = { name: 'bfcl.echo', toolCallId: 'c1', input: { text: 'hi' } };

    const first = await callTool(catalog, call, { meta });
    const second = await callTool(catalog, call, { meta });

    expect(first.retryHint).toMatchObject({ reason: 'rate_limited', retryAfterMs: 2_500 });
    expect(second).toMatchObject({ executed: true, result: { said: 'hi' } });
  });

  it('answers { ok: true } after the fault for a tool without execute, such as a BFCL doc', async () => {
    const external = { ...echo, execute: undefined };
    const catalog = new ToolCatalog([withFaultOnce(external, 'rate_limited')]);
    const call = { name: 'bfcl.echo', toolCallId: 'c1', input: { text: 'hi' } };

    await callTool(catalog, call, { meta });

    expect(await callTool(catalog, call, { meta })).toMatchObject({ executed: true, result: { ok: true } });
  });
});
