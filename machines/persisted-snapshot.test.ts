import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';
import { persistedSnapshotOf } from './persisted-snapshot.ts';
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_KEY } from './snapshot-format.ts';

const add = defineTool({
  id: 'math.add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => ({ sum: a + b }),
});

describe('persistedSnapshotOf', () => {
  it('gives what actor.getPersistedSnapshot() gives, the context object itself included, and its format last, in every state of a run', async () => {
    const runtime = createRuntime({
      agent: { id: 'a' },
      telemetry: false,
      tools: [add],
      planner: scriptedPlanner([
        { toolCalls: [{ name: 'math.add', input: { a: 1, b: 2 } }] },
        { toolCalls: [{ name: 'math.add', input: { a: 3, b: 4 } }] },
        { finalResponse: { text: 'done' } },
      ]),
    });
    const actor = createActor(runtime.machine, {
      input: {
        runId: 'r1',
        agent: { id: 'a' },
        messages: [{ role: 'user', content: 'add' }],
        caps: runtime.caps,
      },
    });
    const pairs: [unknown, unknown][] = [];
    actor.subscribe(() => pairs.push([persistedSnapshotOf(actor), actor.getPersistedSnapshot()]));
    actor.start();
    await waitFor(actor, (snapshot) => snapshot.status === 'done');
    const states = new Set(pairs.map(([, expected]) => (expected as { value: unknown }).value));
    expect([...states]).toEqual(expect.arrayContaining(['planning', 'executing', 'completed']));
    for (const [persisted, expected] of pairs) {
      const { [SNAPSHOT_FORMAT_KEY]: format, ...xstate } = persisted as Record<string, unknown>;
      expect(format).toBe(SNAPSHOT_FORMAT);
      expect(xstate).toStrictEqual(expected);
      expect(Object.keys(persisted as object)).toEqual([
        ...Object.keys(expected as object),
        SNAPSHOT_FORMAT_KEY,
      ]);
      expect((persisted as { context: unknown }).context).toBe((expected as { context: unknown }).context);
    }
    // A running child is persisted with its input, as XState does.
    expect(
      pairs.some(([persisted]) => Object.keys((persisted as { children: object }).children).length > 0),
    ).toBe(true);
  });
});
