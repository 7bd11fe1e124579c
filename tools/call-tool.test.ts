import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  callTool,
  defineTool,
  executeToolCall,
  prepareToolCall,
  RateLimitedError,
  type ToolCallMeta,
  ToolCatalog,
  type ToolContext,
  ToolError,
  ToolTimeoutError,
  ToolUnavailableError,
  toolFromJsonSchema,
  toolOutput,
} from './index.ts';

const meta: ToolCallMeta = {
  runId: 'run-1',
  turnId: 'turn-1',
  toolCallId: 'call-1',
  agentId: 'support',
  attempt: 1,
};

/** The tool of docs/tool-boundary.md §Failures, with a spy for `execute`. */
function upsertProfile(
  execute = vi.fn(async (_input: unknown, _ctx: ToolContext): Promise<unknown> => ({ id: 'cus_1' })),
) {
  const tool = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
    output: z.object({ id: z.string() }),
    examples: [{ email: 'ada@example.com', plan: 'pro' }],
    timeoutMs: 10_000,
    tags: ['write'],
    execute,
  });
  return { tool, execute };
}

function catalogOf(...tools: Parameters<ToolCatalog['add']>[0][]) {
  return new ToolCatalog(tools);
}

function call(name: string, input: unknown, toolCallId = 'call-1') {
  return { name, toolCallId, input };
}

describe('callTool: success', () => {
  it('runs execute with the validated input and ToolCallMeta carrying the call id, and decodes the output', async () => {
    const { tool, execute } = upsertProfile();
    const result = await callTool(
      catalogOf(tool),
      call('crm.upsert_profile', '{"email":"ada@example.com","plan":"pro"}', 'call-42'),
      { meta, labels: { tenant: 'acme' } },
    );

    expect(result).toMatchObject({
      name: 'crm.upsert_profile',
      toolCallId: 'call-42',
      executed: true,
      result: { id: 'cus_1' },
    });
    expect(result.error).toBeUndefined();
    expect(result.retryHint).toBeUndefined();
    expect(result.telemetry?.durationMs).toBeGreaterThanOrEqual(0);
    expect(execute).toHaveBeenCalledTimes(1);
    const [input, ctx] = execute.mock.calls[0]!;
    expect(input).toEqual({ email: 'ada@example.com', plan: 'pro' });
    expect(ctx.meta).toEqual({ ...meta, toolCallId: 'call-42' });
    expect(ctx.labels).toEqual({ tenant: 'acme' });
    expect(ctx.signal.aborted).toBe(false);
  });

  it('passes bounds and artifacts returned through toolOutput onto the result', async () => {
    const search = defineTool({
      id: 'crm.search',
      description: 'Search customers',
      input: z.object({ q: z.string() }),
      bounded: true,
      execute: () =>
        toolOutput(['ada'], {
          bounds: { returned: 1, total: 40, truncated: true, refinementHint: 'add a plan filter' },
          artifacts: [{ kind: 'table', data: [{ name: 'ada' }] }],
        }),
    });
    const result = await callTool(catalogOf(search), call('crm.search', { q: 'a' }), { meta });
    expect(result).toMatchObject({
      executed: true,
      result: ['ada'],
      bounds: { returned: 1, total: 40, truncated: true },
      artifacts: [{ kind: 'table' }],
    });
  });
});

describe('docs/tool-boundary.md §Failures table', () => {
  it('required field absent → missing_fields, restrictToTool, not executed, every absent path listed', async () => {
    const { tool, execute } = upsertProfile();
    const result = await callTool(catalogOf(tool), call('crm.upsert_profile', {}), { meta });

    expect(result.executed).toBe(false);
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint).toMatchObject({
      reason: 'missing_fields',
      tool: 'crm.upsert_profile',
      restrictToTool: true,
      missingFields: ['email', 'plan'],
    });
  });

  it('a missing enum field counts as missing (zod reports it as invalid_value) and carries its allowed values', async () => {
    const { tool } = upsertProfile();
    const result = await callTool(catalogOf(tool), call('crm.upsert_profile', { email: 'ada@example.com' }), {
      meta,
    });
    expect(result.retryHint?.reason).toBe('missing_fields');
    expect(result.retryHint?.missingFields).toEqual(['plan']);
    expect(result.retryHint?.issues).toEqual([
      expect.objectContaining({ path: 'plan', constraint: 'missing', allowed: ['free', 'pro'] }),
    ]);
  });

  it('a missing union-typed field counts as missing too (zod reports it as invalid_union)', () => {
    const tool = defineTool({
      id: 'crm.tag',
      description: 'Tag a customer',
      input: z.object({ customer: z.union([z.string(), z.number()]), tag: z.string() }),
    });
    const prepared = prepareToolCall(catalogOf(tool), call('crm.tag', { tag: 'vip' }));
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.result.retryHint?.reason).toBe('missing_fields');
    expect(prepared.result.retryHint?.missingFields).toEqual(['customer']);
  });

  it('missing and invalid fields together → missing_fields, and issues list both', () => {
    const { tool } = upsertProfile();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.upsert_profile', { email: 'nope' }));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.reason).toBe('missing_fields');
    expect(prepared.result.retryHint?.missingFields).toEqual(['plan']);
    expect(prepared.result.retryHint?.issues?.map((issue) => [issue.path, issue.constraint])).toEqual([
      ['email', 'invalid_format'],
      ['plan', 'missing'],
    ]);
  });

  it('other schema violation → invalid_arguments with issues from zod', async () => {
    const { tool, execute } = upsertProfile();
    const result = await callTool(
      catalogOf(tool),
      call('crm.upsert_profile', { email: 'not-an-email', plan: 'enterprise' }),
      { meta },
    );

    expect(result.executed).toBe(false);
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint).toMatchObject({
      reason: 'invalid_arguments',
      restrictToTool: true,
      missingFields: [],
    });
    expect(result.retryHint?.issues).toEqual([
      expect.objectContaining({
        path: 'email',
        constraint: 'invalid_format',
        expected: 'email',
        received: '"not-an-email"',
      }),
      expect.objectContaining({
        path: 'plan',
        constraint: 'invalid_value',
        allowed: ['free', 'pro'],
        received: '"enterprise"',
      }),
    ]);
  });

  it('a wrong type, a bound and a root that is not an object are issues with expected and received', () => {
    const tool = defineTool({
      id: 'shop.order',
      description: 'Order items',
      input: z.object({ qty: z.int().min(1).max(10), note: z.string().max(5) }),
    });
    const catalog = catalogOf(tool);
    const bad = prepareToolCall(catalog, call('shop.order', { qty: 0, note: 'too long' }));
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.result.retryHint?.issues).toEqual([
      expect.objectContaining({
        path: 'qty',
        constraint: 'too_small',
        expected: '>= 1',
        received: 'integer',
      }),
      expect.objectContaining({
        path: 'note',
        constraint: 'too_big',
        expected: 'at most 5 characters',
        received: 'string',
      }),
    ]);

    const typed = prepareToolCall(catalog, call('shop.order', { qty: '3', note: 'hi' }));
    if (typed.ok) throw new Error('expected a failure');
    expect(typed.result.retryHint?.issues).toEqual([
      expect.objectContaining({
        path: 'qty',
        constraint: 'invalid_type',
        expected: 'number',
        received: 'string',
      }),
    ]);

    const array = prepareToolCall(catalog, call('shop.order', '[1, 2]'));
    if (array.ok) throw new Error('expected a failure');
    expect(array.result.retryHint).toMatchObject({
      reason: 'invalid_arguments',
      missingFields: [],
      priorInput: { $value: [1, 2] },
    });
    expect(array.result.retryHint?.issues).toEqual([
      expect.objectContaining({
        path: '',
        constraint: 'invalid_type',
        expected: 'object',
        received: 'array',
      }),
    ]);
  });

  it('no arguments at all is invalid_arguments, not a missing field with an empty path', () => {
    const { tool } = upsertProfile();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.upsert_profile', undefined));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.reason).toBe('invalid_arguments');
    expect(prepared.result.retryHint?.missingFields).toEqual([]);
  });

  it('arguments that are not valid JSON → invalid_arguments with priorInput { $raw: text }', async () => {
    const { tool, execute } = upsertProfile();
    const text = '{"email": "ada@example.com", plan: pro}';
    const result = await callTool(catalogOf(tool), call('crm.upsert_profile', text), { meta });

    expect(result.executed).toBe(false);
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint).toMatchObject({
      reason: 'invalid_arguments',
      restrictToTool: true,
      priorInput: { $raw: text },
      exampleInput: { email: 'ada@example.com', plan: 'pro' },
    });
    expect(result.error?.message).toMatch(
      /^Argument validation failed for crm\.upsert_profile: .*not valid JSON/,
    );
  });

  it('the question after unreadable JSON asks for the required fields', () => {
    const { tool } = upsertProfile();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.upsert_profile', '{"email":'));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.clarifyingQuestion).toBe(
      'I need more information to run crm.upsert_profile. Please provide: email (Customer email); plan (one of: free, pro).',
    );
  });

  it('unknown tool id → tool_unavailable, not restricted, not executed, closest known ids in the message', async () => {
    const { tool, execute } = upsertProfile();
    const others = ['crm.delete_profile', 'crm.get_profile', 'billing.refund', 'billing.invoice'].map((id) =>
      defineTool({ id, description: id, input: z.object({}) }),
    );
    const result = await callTool(catalogOf(tool, ...others), call('crm.upsert_profil', { plan: 'pro' }), {
      meta,
    });

    expect(result.executed).toBe(false);
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint).toMatchObject({
      reason: 'tool_unavailable',
      tool: 'crm.upsert_profil',
      restrictToTool: false,
      priorInput: { plan: 'pro' },
    });
    expect(result.error?.message).toBe(
      'Unknown tool "crm.upsert_profil". Closest known tools: crm.upsert_profile, crm.get_profile, crm.delete_profile.',
    );
    expect(result.error?.recoverable).toBe(true);
  });

  it('an unknown bare tool name finds the tool by the part after the toolset', () => {
    const { tool } = upsertProfile();
    const refund = defineTool({ id: 'billing.refund', description: '', input: z.object({}) });
    const prepared = prepareToolCall(catalogOf(refund, tool), call('upsert_profile', {}));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.error?.message).toMatch(
      /Closest known tools: crm\.upsert_profile, billing\.refund\.$/,
    );
  });

  it('a disabled tool → tool_unavailable, not executed, and it is not suggested as a closest id', async () => {
    const { tool, execute } = upsertProfile();
    const get = defineTool({ id: 'crm.get_profile', description: '', input: z.object({}) });
    const result = await callTool(
      catalogOf(tool, get),
      call('crm.upsert_profile', { email: 'ada@example.com', plan: 'pro' }),
      { meta, isEnabled: (id) => id !== 'crm.upsert_profile' },
    );

    expect(result.executed).toBe(false);
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint).toMatchObject({ reason: 'tool_unavailable', restrictToTool: false });
    expect(result.error?.message).toBe(
      'Disabled tool "crm.upsert_profile". Closest known tools: crm.get_profile.',
    );
  });

  it('with every tool disabled the message says none is available', () => {
    const { tool } = upsertProfile();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.upsert_profile', {}), {
      isEnabled: () => false,
    });
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.error?.message).toBe(
      'Disabled tool "crm.upsert_profile". No tools are available.',
    );
  });

  it('execute exceeding timeoutMs → timeout, executed, and the signal given to execute is aborted', async () => {
    let seen: AbortSignal | undefined;
    const slow = defineTool({
      id: 'crm.export',
      description: 'Export all profiles',
      input: z.object({}),
      timeoutMs: 30,
      execute: (_input, ctx) => {
        seen = ctx.signal;
        return new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
      },
    });
    const result = await callTool(catalogOf(slow), call('crm.export', {}), { meta });

    expect(result.executed).toBe(true);
    expect(result.retryHint).toMatchObject({ reason: 'timeout', tool: 'crm.export', restrictToTool: false });
    expect(result.error?.message).toBe('Tool crm.export did not finish within 30 ms');
    expect(result.error?.cause?.name).toBe('ToolTimeoutError');
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBeInstanceOf(ToolTimeoutError);
  });

  it('a timeout is reported on time even when execute ignores its signal', async () => {
    const stubborn = defineTool({
      id: 'crm.hang',
      description: '',
      input: z.object({}),
      execute: () => new Promise(() => {}),
    });
    const started = Date.now();
    const result = await executeToolCall(stubborn, {}, { meta, defaultTimeoutMs: 25 });
    expect(result.retryHint?.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a default timeout above the timer limit is clamped instead of firing at once', async () => {
    const quick = defineTool({
      id: 'crm.ping',
      description: '',
      input: z.object({}),
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return 'pong';
      },
    });
    const result = await executeToolCall(quick, {}, { meta, defaultTimeoutMs: Number.POSITIVE_INFINITY });
    expect(result).toMatchObject({ executed: true, result: 'pong' });
  });

  it('RateLimitedError → rate_limited with retryAfterMs from the error', async () => {
    const limited = defineTool({
      id: 'crm.enrich',
      description: '',
      input: z.object({}),
      execute: () => {
        throw new RateLimitedError('429 from enrichment API', { retryAfterMs: 1_500 });
      },
    });
    const result = await callTool(catalogOf(limited), call('crm.enrich', {}), { meta });

    expect(result.executed).toBe(true);
    expect(result.retryHint).toMatchObject({
      reason: 'rate_limited',
      restrictToTool: false,
      retryAfterMs: 1_500,
    });
    expect(result.error?.message).toBe('Tool crm.enrich was rate limited: 429 from enrichment API');
    expect(result.error?.cause?.name).toBe('RateLimitedError');
  });

  it('ToolUnavailableError thrown by execute → tool_unavailable, executed', async () => {
    const down = defineTool({
      id: 'crm.sync',
      description: '',
      input: z.object({}),
      execute: async () => {
        throw new ToolUnavailableError('CRM is in maintenance');
      },
    });
    const result = await callTool(catalogOf(down), call('crm.sync', {}), { meta });

    expect(result.executed).toBe(true);
    expect(result.retryHint).toMatchObject({ reason: 'tool_unavailable', restrictToTool: false });
    expect(result.error?.message).toBe('Tool crm.sync is unavailable: CRM is in maintenance');
  });

  it('output failing the output schema → malformed_response, executed', async () => {
    const { tool } = upsertProfile(vi.fn(async () => ({ id: 42 })));
    const result = await callTool(
      catalogOf(tool),
      call('crm.upsert_profile', { email: 'ada@example.com', plan: 'free' }),
      { meta },
    );

    expect(result.executed).toBe(true);
    expect(result.result).toBeUndefined();
    expect(result.retryHint).toMatchObject({ reason: 'malformed_response', restrictToTool: false });
    expect(result.error?.message).toMatch(
      /^Tool crm\.upsert_profile returned a result that does not match its output schema: id: /,
    );
  });

  it('a bounded tool that returns a bare result → malformed_response', async () => {
    const search = defineTool({
      id: 'crm.search',
      description: '',
      input: z.object({}),
      bounded: true,
      execute: () => ['ada'],
    });
    const result = await callTool(catalogOf(search), call('crm.search', {}), { meta });
    expect(result.retryHint?.reason).toBe('malformed_response');
    expect(result.error?.message).toBe('Tool crm.search is declared bounded but returned no Bounds');
  });

  it('anything else thrown → no hint, recoverable false, the cause chain preserved', async () => {
    const crashing = defineTool({
      id: 'crm.write',
      description: '',
      input: z.object({}),
      execute: () => {
        throw new TypeError('db write failed', { cause: new Error('connection reset') });
      },
    });
    const result = await callTool(catalogOf(crashing), call('crm.write', {}), { meta });

    expect(result.executed).toBe(true);
    expect(result.retryHint).toBeUndefined();
    expect(result.error).toBeInstanceOf(ToolError);
    expect(result.error?.recoverable).toBe(false);
    expect(result.error?.toJSON()).toEqual({
      name: 'TypeError',
      message: 'db write failed',
      recoverable: false,
      cause: { name: 'ToolError', message: 'connection reset', recoverable: false },
    });
  });

  it('a run canceled through the parent signal aborts execute and is a non-recoverable error', async () => {
    const parent = new AbortController();
    let seen: AbortSignal | undefined;
    const long = defineTool({
      id: 'crm.long',
      description: '',
      input: z.object({}),
      execute: (_input, ctx) => {
        seen = ctx.signal;
        return new Promise(() => {});
      },
    });
    const pending = executeToolCall(long, {}, { meta, signal: parent.signal });
    parent.abort(new Error('user canceled the run'));
    const result = await pending;
    expect(seen?.aborted).toBe(true);
    expect(result.retryHint).toBeUndefined();
    expect(result.error).toMatchObject({ message: 'user canceled the run', recoverable: false });
  });

  it('an external tool (no execute) is not executed and says why', async () => {
    const external = defineTool({ id: 'ui.pick_date', description: '', input: z.object({}) });
    const result = await callTool(catalogOf(external), call('ui.pick_date', {}), { meta });
    expect(result.executed).toBe(false);
    expect(result.error?.message).toBe('Tool ui.pick_date has no execute function (it is an external tool)');
  });
});

describe('unknown fields', () => {
  const profileInput = {
    email: 'ada@example.com',
    plan: 'pro',
  };

  it('on a default (stripping) zod object → unknown_field naming the allowed fields', async () => {
    const { tool, execute } = upsertProfile();
    const result = await callTool(
      catalogOf(tool),
      call('crm.upsert_profile', { ...profileInput, nickname: 'ada' }),
      { meta },
    );
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint?.reason).toBe('invalid_arguments');
    expect(result.retryHint?.issues).toEqual([
      {
        path: 'nickname',
        constraint: 'unknown_field',
        message: 'Unknown field "nickname"; allowed fields: email, plan',
        allowed: ['email', 'plan'],
      },
    ]);
  });

  it('on a .strict() object → unknown_field naming the allowed fields', () => {
    const strict = defineTool({
      id: 'crm.strict',
      description: '',
      input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }).strict(),
    });
    const prepared = prepareToolCall(
      catalogOf(strict),
      call('crm.strict', { ...profileInput, nickname: 'ada' }),
    );
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.issues).toEqual([
      expect.objectContaining({ path: 'nickname', constraint: 'unknown_field', allowed: ['email', 'plan'] }),
    ]);
  });

  it('in nested objects (stripping and strict) and inside arrays, with dotted paths', () => {
    const nested = defineTool({
      id: 'shop.ship',
      description: '',
      input: z.object({
        address: z.object({ city: z.string(), street: z.string() }),
        billing: z.object({ iban: z.string() }).strict(),
        items: z.array(z.object({ sku: z.string() })),
      }),
    });
    const prepared = prepareToolCall(
      catalogOf(nested),
      call('shop.ship', {
        address: { city: 'Oslo', street: 'Karl Johans gate', zip: '0154' },
        billing: { iban: 'NO93', bic: 'DNBANOKK' },
        items: [{ sku: 'A-1' }, { sku: 'B-2', colour: 'red' }],
      }),
    );
    if (prepared.ok) throw new Error('expected a failure');
    const unknown = prepared.result.retryHint?.issues?.filter(
      (issue) => issue.constraint === 'unknown_field',
    );
    expect(unknown?.map((issue) => [issue.path, issue.allowed])).toEqual(
      expect.arrayContaining([
        ['address.zip', ['city', 'street']],
        ['items.1.colour', ['sku']],
        ['billing.bic', ['iban']],
      ]),
    );
    expect(unknown).toHaveLength(3);
    // Nobody should be asked to supply an unknown field.
    expect(prepared.result.retryHint?.clarifyingQuestion).toBeUndefined();
  });

  it('on a JSON Schema tool → unknown_field naming the allowed fields', () => {
    const weather = toolFromJsonSchema({
      name: 'get_weather',
      description: 'Current weather',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
      },
    });
    const prepared = prepareToolCall(
      catalogOf(weather),
      call('catalog.get_weather', { city: 'Oslo', country: 'NO' }),
    );
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.issues).toEqual([
      expect.objectContaining({ path: 'country', constraint: 'unknown_field', allowed: ['city', 'unit'] }),
    ]);
  });

  it("unknownFields: 'passthrough' lets them reach execute (zod tool)", async () => {
    const execute = vi.fn((input: unknown) => input);
    const loose = defineTool({
      id: 'crm.note',
      description: '',
      input: z.object({ text: z.string() }),
      unknownFields: 'passthrough',
      execute,
    });
    const result = await callTool(catalogOf(loose), call('crm.note', { text: 'hi', mood: 'happy' }), {
      meta,
    });
    expect(result).toMatchObject({ executed: true, result: { text: 'hi', mood: 'happy' } });
    expect(execute.mock.calls[0]![0]).toEqual({ text: 'hi', mood: 'happy' });
  });

  it("unknownFields: 'passthrough' lets them reach execute (JSON Schema tool)", async () => {
    const loose = toolFromJsonSchema(
      { name: 'crm.note', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
      { unknownFields: 'passthrough', execute: (input) => input },
    );
    const result = await callTool(catalogOf(loose), call('crm.note', { text: 'hi', mood: 'happy' }), {
      meta,
    });
    expect(result).toMatchObject({ executed: true, result: { text: 'hi', mood: 'happy' } });
  });
});

describe('nested missing paths and the clarifying question', () => {
  const order = defineTool({
    id: 'shop.place_order',
    description: 'Place an order',
    input: z.object({
      address: z.object({
        city: z.string().describe('City to ship to'),
        street: z.string(),
      }),
      items: z
        .array(z.object({ sku: z.string().describe('Stock keeping unit'), qty: z.int().min(1) }))
        .min(1),
      speed: z.enum(['standard', 'express']).describe('Shipping speed'),
    }),
  });

  it('lists nested absent paths as dotted paths: address.city, items.0.sku', () => {
    const prepared = prepareToolCall(
      catalogOf(order),
      call('shop.place_order', { address: { street: 'Main St' }, items: [{ qty: 2 }], speed: 'express' }),
    );
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.reason).toBe('missing_fields');
    expect(prepared.result.retryHint?.missingFields).toEqual(['address.city', 'items.0.sku']);
    expect(prepared.result.retryHint?.clarifyingQuestion).toBe(
      'I need more information to run shop.place_order. Please provide: address.city (City to ship to); items.0.sku (Stock keeping unit).',
    );
  });

  it('puts allowed enum values in issues and in the question', () => {
    const prepared = prepareToolCall(
      catalogOf(order),
      call('shop.place_order', {
        address: { city: 'Oslo', street: 'Main St' },
        items: [{ sku: 'A-1', qty: 1 }],
        speed: 'overnight',
      }),
    );
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.issues).toEqual([
      expect.objectContaining({
        path: 'speed',
        constraint: 'invalid_value',
        allowed: ['standard', 'express'],
      }),
    ]);
    expect(prepared.result.retryHint?.clarifyingQuestion).toBe(
      'I need more information to run shop.place_order. Please provide: speed (Shipping speed; one of: standard, express).',
    );
  });

  it('asks the question docs/tool-boundary.md gives for crm.upsert_profile with input {}', () => {
    const { tool } = upsertProfile();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.upsert_profile', {}));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.clarifyingQuestion).toBe(
      'I need more information to run crm.upsert_profile. Please provide: email (Customer email); plan (one of: free, pro).',
    );
  });

  it('names at most three fields, while missingFields lists all of them', () => {
    const wide = defineTool({
      id: 'hr.hire',
      description: '',
      input: z.object({
        first: z.string(),
        last: z.string(),
        role: z.string(),
        team: z.string(),
        start: z.string(),
      }),
    });
    const prepared = prepareToolCall(catalogOf(wide), call('hr.hire', {}));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.missingFields).toEqual(['first', 'last', 'role', 'team', 'start']);
    expect(prepared.result.retryHint?.clarifyingQuestion).toBe(
      'I need more information to run hr.hire. Please provide: first; last; role.',
    );
  });
});

describe('validation failures (docs/tool-boundary.md §Failures)', () => {
  it('message starts with "Argument validation failed", the error is recoverable, priorInput is the rejected input', async () => {
    const { tool } = upsertProfile();
    const input = { email: 'ada@example', plan: 'gold' };
    const result = await callTool(catalogOf(tool), call('crm.upsert_profile', input), { meta });

    expect(result.error).toBeInstanceOf(ToolError);
    expect(result.error?.message.startsWith('Argument validation failed')).toBe(true);
    expect(result.error?.recoverable).toBe(true);
    expect(result.retryHint?.message).toBe(result.error?.message);
    expect(result.retryHint?.priorInput).toEqual(input);
  });

  it("exampleInput is the tool's first example", () => {
    const { tool } = upsertProfile();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.upsert_profile', { plan: 'pro' }));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.retryHint?.exampleInput).toEqual({ email: 'ada@example.com', plan: 'pro' });
  });

  it('exampleInput is synthesized from the schema when the tool has no examples, and it passes the schema', () => {
    const input = z.object({ email: z.email(), plan: z.enum(['free', 'pro']), seats: z.int().min(5) });
    const tool = defineTool({ id: 'crm.create_account', description: '', input });
    const prepared = prepareToolCall(catalogOf(tool), call('crm.create_account', {}));
    if (prepared.ok) throw new Error('expected a failure');
    const example = prepared.result.retryHint?.exampleInput;
    expect(example).toEqual({ email: 'user@example.com', plan: 'free', seats: 5 });
    expect(input.safeParse(example).success).toBe(true);
  });

  it('a message with many issues names five and counts the rest', () => {
    const wide = defineTool({
      id: 'hr.survey',
      description: '',
      input: z.object(Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((k) => [k, z.number()]))),
    });
    const input = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((k) => [k, 'x']));
    const prepared = prepareToolCall(catalogOf(wide), call('hr.survey', input));
    if (prepared.ok) throw new Error('expected a failure');
    expect(prepared.result.error?.message).toMatch(
      /^Argument validation failed for hr\.survey: a: .*; e: [^;]*; and 2 more$/,
    );
  });
});

describe('injected fields', () => {
  function logNote() {
    const execute = vi.fn((input: unknown) => input);
    const tool = defineTool({
      id: 'crm.log_note',
      description: 'Log a note on the session',
      input: z.object({ note: z.string(), session_id: z.string() }),
      inject: ['session_id'],
      execute,
    });
    return { tool, execute };
  }

  it('a model-supplied injected value is dropped before validation and listed in droppedFields', () => {
    const { tool } = logNote();
    const prepared = prepareToolCall(
      catalogOf(tool),
      call('crm.log_note', { note: 'called back', session_id: 'someone-elses-session' }),
    );
    expect(prepared).toMatchObject({
      ok: true,
      input: { note: 'called back' },
      droppedFields: ['session_id'],
    });
    if (!prepared.ok) return;
    expect(prepared.input).not.toHaveProperty('session_id');
  });

  it('executeToolCall runs execute with the injected value a plugin filled in', async () => {
    const { tool, execute } = logNote();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.log_note', { note: 'called back' }));
    if (!prepared.ok) throw new Error('expected ok');
    const result = await executeToolCall(tool, { ...prepared.input, session_id: 'sess-7' }, { meta });
    expect(result).toMatchObject({ executed: true, result: { note: 'called back', session_id: 'sess-7' } });
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('executeToolCall without the injected value filled fails clearly and never runs execute', async () => {
    const { tool, execute } = logNote();
    const prepared = prepareToolCall(catalogOf(tool), call('crm.log_note', { note: 'called back' }));
    if (!prepared.ok) throw new Error('expected ok');
    const result = await executeToolCall(tool, prepared.input, { meta });
    expect(execute).not.toHaveBeenCalled();
    expect(result.executed).toBe(false);
    expect(result.error?.message).toBe(
      'Injected fields of crm.log_note were not filled by a plugin: session_id',
    );
    expect(result.error?.recoverable).toBe(false);
  });
});

describe('hostile input never throws and never reaches a prototype', () => {
  const echo = () => {
    const execute = vi.fn((input: unknown) => input);
    const tool = defineTool({
      id: 'util.echo',
      description: '',
      input: z.object({ text: z.string().optional(), profile: z.record(z.string(), z.unknown()).optional() }),
      unknownFields: 'passthrough',
      execute,
    });
    return { tool, execute };
  };

  const pollutionCases: [string, () => unknown, string][] = [
    ['as text', () => '{"__proto__": {"polluted": 1}}', '__proto__'],
    [
      'as an object built with JSON.parse',
      () => JSON.parse('{"text": "hi", "__proto__": {"polluted": 1}}'),
      '__proto__',
    ],
    ['nested, as text', () => '{"profile": {"__proto__": {"polluted": 1}}}', 'profile.__proto__'],
    [
      'nested, constructor.prototype',
      () => JSON.parse('{"profile": {"constructor": {"prototype": {"polluted": 1}}}}'),
      'profile.constructor',
    ],
    ['a prototype key', () => '{"prototype": {"polluted": 1}}', 'prototype'],
  ];

  it.each(pollutionCases)(
    '%s: rejected as forbidden_key, Object.prototype untouched',
    async (_name, input, path) => {
      const { tool, execute } = echo();
      const result = await callTool(catalogOf(tool), call('util.echo', input()), { meta });

      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect(execute).not.toHaveBeenCalled();
      expect(result.executed).toBe(false);
      expect(result.retryHint?.reason).toBe('invalid_arguments');
      expect(result.retryHint?.issues).toContainEqual(
        expect.objectContaining({ path, constraint: 'forbidden_key' }),
      );
      expect(JSON.stringify(result.retryHint?.priorInput)).not.toContain('polluted');
    },
  );

  it('JSON text over 1 MiB is rejected by default, before parsing', async () => {
    const { tool, execute } = echo();
    const text = JSON.stringify({ text: 'x'.repeat(1024 * 1024) });
    const result = await callTool(catalogOf(tool), call('util.echo', text), { meta });
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint?.reason).toBe('invalid_arguments');
    expect(result.error?.message).toBe(
      `Argument validation failed for util.echo: Arguments are ${text.length} bytes; the limit is 1048576 bytes`,
    );
    expect(String(result.retryHint?.priorInput?.$raw)).toHaveLength(4096 + '…(truncated)'.length);
  });

  it('a configured limits.maxBytes applies to text and to objects', async () => {
    const { tool, execute } = echo();
    const catalog = catalogOf(tool);
    const limits = { maxBytes: 100 };
    const json = JSON.stringify({ text: 'y'.repeat(120) });
    const text = await callTool(catalog, call('util.echo', json), { meta, limits });
    expect(text.error?.message).toMatch(
      new RegExp(`Arguments are ${json.length} bytes; the limit is 100 bytes$`),
    );
    const object = await callTool(catalog, call('util.echo', { text: 'y'.repeat(120) }), { meta, limits });
    expect(object.error?.message).toMatch(/Arguments exceed the limit of 100 bytes$/);
    const small = await callTool(catalog, call('util.echo', { text: 'y'.repeat(50) }), { meta, limits });
    expect(small.executed).toBe(true);
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('nesting deeper than 64 levels is rejected, as text and as objects; 64 levels pass the parser', async () => {
    const { tool } = echo();
    const catalog = catalogOf(tool);
    const nestedText = (levels: number) => `{"profile":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    const nestedObject = (levels: number) => {
      // Two object levels (the arguments, profile) around levels - 2 arrays.
      let value: unknown = [];
      for (let i = 3; i < levels; i++) value = [value];
      return { profile: { deep: value } };
    };

    const deepText = await callTool(catalog, call('util.echo', nestedText(65)), { meta });
    expect(deepText.error?.message).toMatch(/Arguments nest 65 levels deep; the limit is 64$/);
    const deepObject = await callTool(catalog, call('util.echo', nestedObject(65)), { meta });
    expect(deepObject.error?.message).toMatch(/Arguments nest deeper than the limit of 64 levels$/);

    // At the limit the parser accepts; the schema then judges (profile must be a record).
    const atLimit = await callTool(catalog, call('util.echo', nestedObject(64)), { meta });
    expect(atLimit.executed).toBe(true);
  });

  it('a cyclic object → invalid_arguments naming the cycle', async () => {
    const { tool } = echo();
    const cyclic: Record<string, unknown> = { text: 'hi' };
    cyclic.profile = { self: cyclic };
    const result = await callTool(catalogOf(tool), call('util.echo', cyclic), { meta });
    expect(result.retryHint?.reason).toBe('invalid_arguments');
    expect(result.error?.message).toBe(
      'Argument validation failed for util.echo: profile.self: a cyclic value is not JSON',
    );
    // The preview shows what it could read, the cycle marked.
    expect(result.retryHint?.priorInput).toEqual({
      $raw: '{"text":"hi","profile":{"self":"[Circular]"}}',
    });
  });

  const notJson: [string, unknown, string][] = [
    ['a function', { text: 'hi', profile: { run: () => 1 } }, 'profile.run: a function is not JSON'],
    ['a BigInt', { profile: { n: 10n } }, 'profile.n: a bigint is not JSON'],
    ['NaN', { profile: { n: Number.NaN } }, 'profile.n: NaN is not a JSON number'],
    ['Infinity', { profile: { n: Number.POSITIVE_INFINITY } }, 'profile.n: Infinity is not a JSON number'],
    ['a symbol', { profile: { s: Symbol('x') } }, 'profile.s: a symbol is not JSON'],
    ['a Map', { profile: { m: new Map([['a', 1]]) } }, 'profile.m: a Map is not JSON'],
    ['a function as the whole input', () => 1, 'arguments: a function is not JSON'],
  ];

  it.each(notJson)('%s → invalid_arguments with a clear message', async (_name, input, message) => {
    const { tool, execute } = echo();
    const result = await callTool(catalogOf(tool), call('util.echo', input), { meta });
    expect(execute).not.toHaveBeenCalled();
    expect(result.retryHint?.reason).toBe('invalid_arguments');
    expect(result.error?.message).toBe(`Argument validation failed for util.echo: ${message}`);
  });

  it('a getter that throws and a hostile proxy are reported, not thrown', async () => {
    const { tool } = echo();
    const catalog = catalogOf(tool);
    const getter = {
      get text() {
        throw new Error('gotcha');
      },
    };
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no keys for you');
        },
      },
    );
    const fromGetter = await callTool(catalog, call('util.echo', getter), { meta });
    expect(fromGetter.error?.message).toBe(
      'Argument validation failed for util.echo: Arguments could not be read: gotcha',
    );
    const fromProxy = await callTool(catalog, call('util.echo', proxy), { meta });
    expect(fromProxy.error?.message).toBe(
      'Argument validation failed for util.echo: Arguments could not be read: no keys for you',
    );
  });

  it('an object with many shared references is cut off by the value-count limit quickly', async () => {
    const { tool } = echo();
    // 2^60 paths as a tree; the walk must stop at the byte limit, and so must the priorInput preview.
    let shared: Record<string, unknown> = { text: 'leaf' };
    for (let i = 0; i < 60; i++) shared = { left: shared, right: shared };
    const started = Date.now();
    const result = await callTool(catalogOf(tool), call('util.echo', { profile: shared }), { meta });
    expect(result.error?.message).toMatch(/Arguments hold more than 10000 values$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a Date becomes its JSON text, as JSON.stringify would send it', async () => {
    const { tool } = echo();
    const result = await callTool(catalogOf(tool), call('util.echo', { text: new Date(0) }), { meta });
    expect(result).toMatchObject({ executed: true, result: { text: '1970-01-01T00:00:00.000Z' } });
  });

  it('a tool name that is not a string is reported as an unknown tool', async () => {
    const { tool } = echo();
    const result = await callTool(
      catalogOf(tool),
      { name: 42 as unknown as string, toolCallId: 'c-9', input: {} },
      { meta },
    );
    expect(result).toMatchObject({ name: '42', toolCallId: 'c-9', executed: false });
    expect(result.retryHint?.reason).toBe('tool_unavailable');
  });

  it('an absurdly long unknown tool name is cut in the message', async () => {
    const { tool } = echo();
    const name = `util.${'e'.repeat(10_000)}`;
    const result = await callTool(catalogOf(tool), call(name, {}), { meta });
    expect(result.retryHint?.reason).toBe('tool_unavailable');
    expect(result.error?.message.length).toBeLessThan(400);
  });
});
