import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Planner, scriptedPlanner } from '../run/planner.ts';
import { RunEventSchema } from '../run/run-events.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

describe('a planner result that throws when read', () => {
  it('fails the run as an invalid PlanResult: run_failed, events$ closed, failed status stored', async () => {
    // A hostile planner result: reading it throws, inside the machine's own step.
    const hostile = Object.defineProperty({}, 'finalResponse', {
      enumerable: true,
      get() {
        throw new Error('boom from a getter');
      },
    });
    const planner: Planner = { planStart: async () => hostile, planResume: async () => hostile };
    const errors: unknown[] = [];
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      telemetry: false,
      onError: (e) => errors.push(e),
    });

    const run = runtime.start({ messages: [{ role: 'user', content: 'hi' }] });
    const events = lastValueFrom(run.events$.pipe(toArray()));
    const outcome = await run.result();

    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toContain('boom from a getter');
    const seen = await events;
    expect(seen.slice(-2).map((event) => event.type)).toEqual(['state_changed', 'run_failed']);
    expect(seen.at(-2)).toMatchObject({ state: 'failed' });
    for (const event of seen) expect(RunEventSchema.safeParse(event).success).toBe(true);
    expect(outcome.error?.message).toContain('invalid PlanResult');
    expect(errors).toEqual([]);
    await runtime.flush?.();
    const stored = await runtime.store.load(run.runId);
    expect(stored?.status).toBe('failed');
    await runtime.close?.();
  });
});

describe('a planner result over the run bounds', () => {
  it('a tool input of new Array(1e7) fails the run from its size, no slot read (it was copied whole)', async () => {
    let reads = 0;
    const slots = new Proxy(new Array(1e7), {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const plan = { toolCalls: [{ name: 'util.echo', input: { payload: slots } }] };
    const planner: Planner = { planStart: async () => plan, planResume: async () => plan };
    const runtime = createRuntime({ agent: { id: 'a' }, planner, telemetry: false });

    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();

    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toContain(
      "Planner returned a PlanResult over the run's bounds: Plan result hold more than 1000000 values",
    );
    expect(reads).toBe(0);
    await runtime.close?.();
  });
});

describe("a code planner's object input with its own __proto__ key", () => {
  // Issue 35 (gap): planResultAsJson copied the input without the key and the call ran; the same
  // input from a model (JSON text) is refused at the tool boundary.
  it.each([
    ['top level', () => JSON.parse('{"text": "hi", "__proto__": {"isAdmin": true}}'), '__proto__'],
    ['nested', () => ({ text: 'hi', meta: JSON.parse('{"constructor": {"prototype": {"x": 1}}}') }), 'meta'],
  ])('%s: refused as forbidden_key, the tool not run', async (_where, input, pathStart) => {
    let ran = 0;
    const echo = defineTool({
      id: 'util.echo',
      description: 'Echo',
      input: z.object({ text: z.string(), meta: z.record(z.string(), z.unknown()).optional() }),
      execute: async ({ text }) => {
        ran++;
        return { text };
      },
    });
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'util.echo', input: input() }] },
      { finalResponse: { text: 'done' } },
    ]);
    const runtime = createRuntime({ agent: { id: 'a' }, planner, tools: [echo], telemetry: false });
    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();

    expect(ran).toBe(0);
    expect(outcome.toolResults[0]).toMatchObject({ executed: false });
    const issues = outcome.toolResults[0]?.retryHint?.issues ?? [];
    expect(issues).toContainEqual(expect.objectContaining({ constraint: 'forbidden_key' }));
    expect(issues.find((issue) => issue.constraint === 'forbidden_key')?.path.startsWith(pathStart)).toBe(
      true,
    );
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    await runtime.close?.();
  });
});
