import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../plugins/define-plugin.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { TELEMETRY_PLUGIN_NAME } from '../telemetry/telemetry-plugin.ts';
import { defineTool } from '../tools/define-tool.ts';
import { resolveRuntimeOptions } from './runtime-options.ts';
import { pluginHooks } from './runtime-plugins.ts';

const planner = scriptedPlanner([]);
const tool = (id: string) =>
  defineTool({ id, description: id, input: z.object({}), execute: async () => ({}) });

describe('createRuntime step 1: options (runtime-options.ts)', () => {
  it('orders plugins telemetry first, then the app’s, and names the agent by its id', () => {
    const mine = definePlugin({ name: 'mine', tools: [tool('mine.t')] });
    const settings = resolveRuntimeOptions({ agent: { id: 'a' }, planner, plugins: [mine] });
    expect(settings.plugins.map((plugin) => plugin.name)).toEqual([TELEMETRY_PLUGIN_NAME, 'mine']);
    expect(settings.agent).toEqual({ id: 'a', name: 'a' });
    expect(settings.catalog.list().map((t) => t.id)).toContain('mine.t');
    expect(settings.ceilings).toEqual(DEFAULT_CAPS);
  });

  it('leaves telemetry out when it is false, and caps the app set over the defaults', () => {
    const settings = resolveRuntimeOptions({
      agent: { id: 'a' },
      planner,
      telemetry: false,
      caps: { maxToolCalls: 3 },
    });
    expect(settings.plugins).toEqual([]);
    expect(settings.ceilings.maxToolCalls).toBe(3);
  });

  it('refuses two tools with one id', () => {
    expect(() =>
      resolveRuntimeOptions({ agent: { id: 'a' }, planner, tools: [tool('t'), tool('t')] }),
    ).toThrow();
  });
});

describe('createRuntime step 4: plugin hooks (runtime-plugins.ts)', () => {
  it('calls each plugin’s hook in order; a throwing one is reported and the next still runs', () => {
    const calls: string[] = [];
    const errors: string[] = [];
    const hooks = pluginHooks(
      [
        definePlugin({
          name: 'first',
          onRunStart: () => {
            calls.push('first');
            throw new Error('boom');
          },
        }),
        definePlugin({ name: 'silent' }),
        definePlugin({
          name: 'second',
          onRunStart: (_info, how) => {
            calls.push(`second:${how}`);
          },
        }),
      ],
      (_error, where) => errors.push(where),
    );
    hooks.notifyRunStart(
      { runId: 'r', agent: { id: 'a', name: 'a' }, labels: {}, traceContext: null },
      'resume',
    );
    expect(calls).toEqual(['first', 'second:resume']);
    expect(errors).toEqual(['plugin first onRunStart']);
  });
});
