import { defineTool, RateLimitedError } from 'toolwarden';
import { z } from 'zod';

/**
 * A small fake CRM for the example: one read tool and two write tools (tagged `write`). The
 * behaviour of each write is scripted per call, so the demo and the tests can show every case.
 */
export type WriteBehaviour = 'ok' | 'rate_limited' | 'malformed';

export function crmTools(script: { upsert?: WriteBehaviour[]; import?: WriteBehaviour[] } = {}) {
  const writes: { tool: string; input: unknown }[] = [];
  const next = (list: WriteBehaviour[] | undefined) => list?.shift() ?? 'ok';

  const lookup = defineTool({
    id: 'crm.lookup',
    description: 'Find a customer profile by email',
    input: z.object({ email: z.email().describe('Customer email') }),
    tags: ['read'],
    execute: async ({ email }) => ({ email, plan: 'free' }),
  });

  const upsert = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
    output: z.object({ id: z.string() }),
    examples: [{ email: 'ada@example.com', plan: 'pro' }],
    tags: ['write'],
    execute: async (input, { meta }) => {
      const behaviour = next(script.upsert);
      if (behaviour === 'rate_limited')
        throw new RateLimitedError('CRM API: 429 Too Many Requests', { retryAfterMs: 50 });
      writes.push({ tool: 'crm.upsert_profile', input });
      return behaviour === 'malformed' ? { id: 42 } : { id: `profile-${meta.toolCallId}` };
    },
  });

  const bulkImport = defineTool({
    id: 'crm.bulk_import',
    description: 'Import many profiles at once',
    input: z.object({ rows: z.array(z.object({ email: z.email(), plan: z.enum(['free', 'pro']) })).min(1) }),
    output: z.object({ imported: z.number().int() }),
    tags: ['write'],
    execute: async ({ rows }) => {
      const behaviour = next(script.import);
      if (behaviour === 'rate_limited') throw new RateLimitedError('CRM API: 429', { retryAfterMs: 50 });
      writes.push({ tool: 'crm.bulk_import', input: rows });
      return behaviour === 'malformed' ? { imported: 'all of them' } : { imported: rows.length };
    },
  });

  return { tools: [lookup, upsert, bulkImport], writes };
}
