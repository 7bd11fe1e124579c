import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { closestIds, levenshtein } from './closest-ids.ts';
import { defineTool, ToolDefinitionError } from './define-tool.ts';
import { ToolCatalog } from './tool-catalog.ts';

const tool = (id: string, tags?: string[]) =>
  defineTool({
    id,
    description: `does ${id}`,
    input: z.object({ q: z.string() }),
    output: z.object({ ok: z.boolean() }),
    tags,
    execute: async () => ({ ok: true }),
  });

describe('ToolCatalog', () => {
  it('looks tools up by id and lists them in registration order', () => {
    const catalog = new ToolCatalog([tool('crm.search'), tool('billing.refund')]);
    expect(catalog.get('crm.search')?.id).toBe('crm.search');
    expect(catalog.get('crm.nope')).toBeUndefined();
    expect(catalog.has('billing.refund')).toBe(true);
    expect(catalog.ids).toEqual(['crm.search', 'billing.refund']);
  });

  it('rejects two tools with one id', () => {
    expect(() => new ToolCatalog([tool('crm.search'), tool('crm.search')])).toThrow(ToolDefinitionError);
  });

  it('gives planner descriptors, filtered', () => {
    const catalog = new ToolCatalog([tool('crm.search', ['read']), tool('crm.delete', ['write'])]);
    expect(catalog.descriptors((t) => !t.tags?.includes('write'))).toEqual([
      {
        name: 'crm.search',
        description: 'does crm.search',
        inputSchema: catalog.get('crm.search')?.inputSchema,
      },
    ]);
  });

  it('exports tool_schemas.json in one shape, with Goa-AI field names', () => {
    const schemas = new ToolCatalog([tool('crm.search_profiles', ['read'])]).schemas('support-agent');
    expect(schemas.tools).toEqual([
      {
        id: 'crm.search_profiles',
        service: 'support-agent',
        toolset: 'crm',
        title: 'Search profiles',
        description: 'does crm.search_profiles',
        tags: ['read'],
        payload: {
          schema: expect.objectContaining({ type: 'object', properties: { q: { type: 'string' } } }),
        },
        result: {
          schema: expect.objectContaining({ type: 'object', properties: { ok: { type: 'boolean' } } }),
        },
        confirmation: { required: false },
      },
    ]);
  });
});

describe('closestIds', () => {
  const ids = ['crm.upsert_profile', 'crm.get_profile', 'billing.refund', 'billing.invoice'];

  it('ranks by edit distance to the id or to the part after the toolset', () => {
    expect(closestIds('crm.upsert_profil', ids)).toEqual([
      'crm.upsert_profile',
      'crm.get_profile',
      'billing.refund',
    ]);
    expect(closestIds('refund', ids, 1)).toEqual(['billing.refund']);
    expect(closestIds('BILLING.INVOICE', ids, 1)).toEqual(['billing.invoice']);
  });

  it('returns nothing when there is nothing to suggest', () => {
    expect(closestIds('crm.search', [])).toEqual([]);
  });

  it('levenshtein counts edits and caps long inputs', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(levenshtein('a'.repeat(10_000), 'b'.repeat(10_000))).toBe(256);
  });
});
