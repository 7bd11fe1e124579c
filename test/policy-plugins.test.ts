import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, PluginDefinitionError } from '../plugins/define-plugin.ts';
import { fromLabel, fromMeta, injectFields } from '../plugins/inject-fields.ts';
import { definePolicy } from '../policies/define-policy.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { ToolContext } from '../tools/define-tool.ts';
import { defineTool } from '../tools/define-tool.ts';

/** definePlugin (docs/policies.md) and the injected-fields plugin (docs/tool-boundary.md). */

function auditTool() {
  const received: { input: Record<string, unknown>; ctx: ToolContext }[] = [];
  const tool = defineTool({
    id: 'audit.record',
    description: 'Record an audit entry for the current session',
    input: z.object({ action: z.string(), session_id: z.string(), tenant_id: z.string() }),
    inject: ['session_id', 'tenant_id'],
    execute: async (input, ctx) => {
      received.push({ input, ctx });
      return { ok: true };
    },
  });
  return { tool, received };
}

const injector = injectFields({ session_id: fromMeta('sessionId'), tenant_id: fromLabel('tenant') });
const messages = [{ role: 'user' as const, content: 'log it' }];

describe('injectFields', () => {
  it('hides injected fields from the model-facing schema', () => {
    const { tool } = auditTool();
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: scriptedPlanner([]),
      tools: [tool],
      plugins: [injector],
    });
    const schema = runtime.toolSchema('audit.record') as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(schema.properties)).toEqual(['action']);
    expect(schema.required).toEqual(['action']);
  });

  it('fills them from ToolCallMeta and run labels; a model-supplied value never reaches the tool', async () => {
    const { tool, received } = auditTool();
    const planner = scriptedPlanner([
      {
        toolCalls: [
          {
            name: 'audit.record',
            input: { action: 'login', session_id: 'attacker-session', tenant_id: 'other-tenant' },
          },
          { name: 'audit.record', input: '{"action":"logout","session_id":"from-json-text"}' },
        ],
      },
      { finalResponse: { text: 'logged' } },
    ]);
    const runtime = createRuntime({ agent: { id: 'a' }, planner, tools: [tool], plugins: [injector] });
    const run = runtime.start({ messages, sessionId: 'sess-42', labels: { tenant: 'acme' } });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(received.map((r) => r.input)).toEqual([
      { action: 'login', session_id: 'sess-42', tenant_id: 'acme' },
      { action: 'logout', session_id: 'sess-42', tenant_id: 'acme' },
    ]);
    expect(outcome.toolResults.map((r) => r.telemetry?.injection)).toEqual([
      { filled: ['session_id', 'tenant_id'], dropped: ['session_id', 'tenant_id'] },
      { filled: ['session_id', 'tenant_id'], dropped: ['session_id'] },
    ]);
  });

  it('when no trusted value exists the call fails instead of using the model’s value', async () => {
    const { tool, received } = auditTool();
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'audit.record', input: { action: 'login', session_id: 'attacker', tenant_id: 'x' } },
        ],
      },
      { finalResponse: { text: 'done' } },
    ]);
    const runtime = createRuntime({ agent: { id: 'a' }, planner, tools: [tool], plugins: [injector] });
    const outcome = await runtime.start({ messages }).result();
    expect(received).toEqual([]);
    expect(outcome.toolResults[0]?.executed).toBe(false);
    expect(outcome.toolResults[0]?.error?.message).toContain(
      'Injected fields of audit.record were not filled by a plugin',
    );
    expect(outcome.toolResults[0]?.telemetry?.injection).toEqual({
      filled: [],
      dropped: ['session_id', 'tenant_id'],
    });
  });

  it('a model cannot set an injected field even without the plugin', async () => {
    const { tool, received } = auditTool();
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'audit.record', input: { action: 'a', session_id: 's', tenant_id: 't' } }] },
      { finalResponse: { text: 'done' } },
    ]);
    const outcome = await createRuntime({ agent: { id: 'a' }, planner, tools: [tool] })
      .start({ messages })
      .result();
    expect(received).toEqual([]);
    expect(outcome.toolResults[0]).toMatchObject({
      executed: false,
      error: { message: expect.stringContaining('not filled') },
    });
  });

  it('leaves tools without injected fields untouched', async () => {
    const plain = defineTool({
      id: 'x.echo',
      description: 'echo',
      input: z.object({ v: z.number() }),
      execute: (i) => i,
    });
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'x.echo', input: { v: 1 } }] },
      { finalResponse: { text: 'ok' } },
    ]);
    const outcome = await createRuntime({ agent: { id: 'a' }, planner, tools: [plain], plugins: [injector] })
      .start({ messages })
      .result();
    expect(outcome.toolResults[0]?.result).toEqual({ v: 1 });
    expect(outcome.toolResults[0]?.telemetry?.injection).toBeUndefined();
  });
});

describe('definePlugin', () => {
  it('rejects a plugin without a name, with raw policies or tools, or with a non-function hook', () => {
    expect(() => definePlugin({ name: '' })).toThrow(PluginDefinitionError);
    expect(() => definePlugin({ name: 'p', policies: [{ name: 'raw' } as never] })).toThrow(
      /policies\[0\] is not a policy/,
    );
    expect(() => definePlugin({ name: 'p', tools: [{ id: 'x.y' } as never] })).toThrow(
      /tools\[0\] is not a tool/,
    );
    expect(() => definePlugin({ name: 'p', onEvent: 'nope' as never })).toThrow(/onEvent must be a function/);
  });

  it('bundles tools, policies, wrapToolCall, wrapPlan and onEvent into a runtime', async () => {
    const seen: string[] = [];
    const ping = defineTool({
      id: 'net.ping',
      description: 'ping',
      input: z.object({}),
      execute: () => 'pong',
    });
    const plugin = definePlugin({
      name: 'bundle',
      tools: [ping],
      policies: [definePolicy({ name: 'note-results', onToolResult: (r) => ({ note: `saw ${r.name}` }) })],
      async wrapToolCall(call, next) {
        seen.push(`tool:${call.tool.id}`);
        return next(call);
      },
      async wrapPlan(plan, next) {
        seen.push(`plan:${plan.kind}`);
        return next(plan);
      },
      onEvent(event) {
        if (event.type === 'policy_decision') seen.push(`decision:${event.decision.note}`);
      },
    });
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'net.ping', input: {} }] },
      { finalResponse: { text: 'ok' } },
    ]);
    const outcome = await createRuntime({ agent: { id: 'a' }, planner, plugins: [plugin] })
      .start({ messages })
      .result();
    expect(outcome.toolResults[0]?.result).toBe('pong');
    expect(seen).toEqual(['plan:start', 'tool:net.ping', 'decision:saw net.ping', 'plan:resume']);
  });
});

describe('a wrapPlan hook that throws synchronously (not an async function)', () => {
  it.each([
    ['without telemetry', false as const],
    ['with the default telemetry plugin (no SDK)', undefined],
  ])('fails the turn with its error at once, %s', async (_name, telemetry) => {
    const thrower = definePlugin({
      name: 'sync-thrower',
      wrapPlan() {
        throw new Error('wrapPlan threw');
      },
    });
    const planner = scriptedPlanner([{ finalResponse: { text: 'never' } }]);
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      plugins: [thrower],
      ...(telemetry === false ? { telemetry } : {}),
    });
    const run = runtime.start({ messages });
    // Before the fix the turn scheduler swallowed the throw: the run waited for its time budget.
    const outcome = await Promise.race([
      run.result(),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 2_000)),
    ]);
    expect(outcome).not.toBe('still waiting');
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('wrapPlan threw') },
    });
    await runtime.close();
  });
});
