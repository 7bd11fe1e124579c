/**
 * Issue 12, defect 2: the boundary amplified its input. 500,000 wrong items (977 KiB, under the
 * byte cap) built a 77 MB RetryHint with 500,000 issues; `{ tags: new Array(1e6) }` passed the
 * byte cap for free. A hint now lists at most 20 issues (the rest counted in its message), every
 * part of it is bounded, and every value counts against the caps. Time per input is reported by
 * `npm run fuzz`, not asserted here.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callTool } from '../../tools/call-tool.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { ToolCatalog } from '../../tools/tool-catalog.ts';

const meta = { runId: 'r', turnId: 'r:t1', toolCallId: 'r:t1:c1', agentId: 'a', attempt: 1 };
const tagger = defineTool({
  id: 'crm.tag',
  description: 'Tags a profile',
  input: z.object({ tags: z.array(z.string()), note: z.string().optional() }),
  execute: async () => ({ ok: true }),
});
const catalog = new ToolCatalog([tagger]);
const HINT_LIMIT_BYTES = 16 * 1024;

describe('a hint stays small whatever the input', () => {
  it('for thousands of wrong items: 20 issues described, the rest counted, under 16 KB', async () => {
    const input = JSON.stringify({ tags: Array.from({ length: 9_000 }, () => 1) });
    const result = await callTool(catalog, { name: 'crm.tag', toolCallId: 'c', input }, { meta });

    expect(result.executed).toBe(false);
    expect(result.retryHint?.issues).toHaveLength(20);
    expect(result.error?.message).toContain('and 8995 more');
    expect(JSON.stringify(result.retryHint).length).toBeLessThan(HINT_LIMIT_BYTES);
  });

  it('for 500,000 items under the byte cap: refused as too many values, a small hint', async () => {
    const input = JSON.stringify({ tags: Array.from({ length: 500_000 }, () => 1) });
    const result = await callTool(catalog, { name: 'crm.tag', toolCallId: 'c', input }, { meta });

    expect(result.error?.message).toContain('Arguments hold more than 10000 values');
    expect(JSON.stringify(result.retryHint).length).toBeLessThan(HINT_LIMIT_BYTES);
  });

  it('for an object with a million empty slots: refused, nothing built', async () => {
    const result = await callTool(
      catalog,
      { name: 'crm.tag', toolCallId: 'c', input: { tags: new Array(1e6) } },
      { meta },
    );
    expect(result.error?.message).toMatch(/Arguments (hold more than 10000 values|exceed the limit)/);
    expect(JSON.stringify(result.retryHint).length).toBeLessThan(HINT_LIMIT_BYTES);
  });

  it('for a long unknown field and a huge prior input: every field clipped', async () => {
    const input = { tags: ['a'], note: 'n'.repeat(900_000), ['x'.repeat(10_000)]: 1 };
    const result = await callTool(catalog, { name: 'crm.tag', toolCallId: 'c', input }, { meta });

    expect(result.retryHint?.issues?.[0]?.constraint).toBe('unknown_field');
    expect(result.retryHint?.priorInput).toMatchObject({ $chars: expect.any(Number) });
    expect(JSON.stringify(result.retryHint).length).toBeLessThan(HINT_LIMIT_BYTES);
  });
});

/** `target` behind a Proxy that counts reads of its items or members (not `length`). */
function counting<T extends object>(target: T): { value: T; reads: () => number } {
  let reads = 0;
  const value = new Proxy(target, {
    get(object, key, receiver) {
      if (typeof key === 'string' && key !== 'length' && Object.hasOwn(object, key)) reads++;
      else if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(object, key, receiver);
    },
  });
  return { value, reads: () => reads };
}

describe('a value over the caps is refused from its size, not walked (issue 24 item 8)', () => {
  it('new Array(1e7) as the input: refused as too many values with no item read (it took 2.6 s)', async () => {
    const slots = counting(new Array(1e7));
    const result = await callTool(
      catalog,
      { name: 'crm.tag', toolCallId: 'c', input: slots.value },
      { meta },
    );

    expect(result.error?.message).toBe(
      'Argument validation failed for crm.tag: Arguments hold more than 10000 values',
    );
    // The refusal reads none; the hint's `$raw` preview reads the few it shows.
    expect(slots.reads()).toBeLessThan(1_000);
    expect(JSON.stringify(result.retryHint).length).toBeLessThan(HINT_LIMIT_BYTES);
  });

  it('an array of 10^7 slots inside the input: refused the same way', async () => {
    const slots = counting(new Array(1e7));
    const result = await callTool(
      catalog,
      { name: 'crm.tag', toolCallId: 'c', input: { tags: slots.value } },
      { meta },
    );
    expect(result.error?.message).toContain('Arguments hold more than 10000 values');
    expect(slots.reads()).toBeLessThan(1_000);
  });

  it('an object of 10^5 keys: refused from its key count, members read only for the preview', async () => {
    const wide = counting(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])));
    const result = await callTool(catalog, { name: 'crm.tag', toolCallId: 'c', input: wide.value }, { meta });

    expect(result.error?.message).toContain('Arguments hold more than 10000 values');
    expect(wide.reads()).toBeLessThan(1_000);
  });

  it('long unknown keys: every key clipped in the hint (under 16 KB) and the message (under 3 KB)', async () => {
    // Was a 26.7 KB hint and a 50-98 KB message.
    const input: Record<string, unknown> = { tags: ['a'] };
    for (let i = 0; i < 20; i++) input[`${'k'.repeat(5_000)}${i}`] = 1;
    const result = await callTool(catalog, { name: 'crm.tag', toolCallId: 'c', input }, { meta });

    expect(result.retryHint?.issues).toHaveLength(20);
    expect(result.retryHint?.issues?.[0]).toMatchObject({
      constraint: 'unknown_field',
      path: `${'k'.repeat(100)}…`,
    });
    expect(JSON.stringify(result.retryHint).length).toBeLessThan(HINT_LIMIT_BYTES);
    expect(result.error?.message.length).toBeLessThan(3_000);
    expect(result.error?.message).toContain('and 15 more');
  });
});

describe('a tool’s own error text is clipped in the refusal (issue 24 item 8)', () => {
  it('a 5 MB ToolArgumentsRejectedError message: the ToolError and the hint keep 4,096 characters', async () => {
    const { ToolArgumentsRejectedError } = await import('../../tools/tool-error.ts');
    const picky = defineTool({
      id: 'crm.picky',
      description: 'Refuses everything at length',
      input: z.object({}),
      execute: async () => {
        throw new ToolArgumentsRejectedError('r'.repeat(5_000_000));
      },
    });
    const result = await callTool(
      new ToolCatalog([picky]),
      { name: 'crm.picky', toolCallId: 'c', input: {} },
      { meta },
    );

    expect(result.retryHint?.reason).toBe('invalid_arguments');
    expect(result.error?.message.length).toBeLessThanOrEqual(4_097);
    expect(result.retryHint?.message.length).toBeLessThanOrEqual(4_097);
    expect(result.error?.message).toMatch(/^Tool crm.picky refused its arguments: r+…$/);
  });
});
