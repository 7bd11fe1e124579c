import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { z } from 'zod';
import { persistedSnapshotOf } from '../../machines/persisted-snapshot.ts';
import type { PlanResult } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { createRuntime } from '../create-runtime.ts';
import { packSnapshot, unpackSnapshot } from './snapshot-codec.ts';

const json = (value: unknown) => JSON.parse(JSON.stringify(value));

describe('packSnapshot / unpackSnapshot', () => {
  const context = {
    runId: 'r1',
    labels: { tenant: 'acme' },
    messages: [{ role: 'user', content: 'hi' }],
    batch: { pending: [{ toolCallId: 'c1', name: 't.a', input: { x: 1 } }] },
  };

  it('stores each context object a child input shares once, and puts it back on restore', () => {
    const persisted = {
      status: 'active',
      value: 'executing',
      context,
      children: {
        'tool.c1': {
          src: 'executeTool',
          snapshot: {
            status: 'active',
            input: {
              call: context.batch.pending[0],
              labels: context.labels,
              index: 0,
              meta: { toolCallId: 'c1' },
            },
          },
        },
        plan: { src: 'plan', snapshot: { status: 'active', input: { kind: 'resume', context } } },
        // A run stored since the steps actor has one; without it, unpacking adds it (see below).
        steps: { src: 'runSteps', snapshot: { status: 'active' } },
      },
    };
    const packed = packSnapshot(persisted) as Record<string, unknown>;
    expect(packed['$toolwarden.refs']).toEqual({
      'tool.c1': { call: ['batch', 'pending', 0], labels: ['labels'] },
      plan: { context: [] },
    });
    expect(json(packed).children['tool.c1'].snapshot.input).toEqual({ index: 0, meta: { toolCallId: 'c1' } });
    expect(json(packed).children.plan.snapshot.input).toEqual({ kind: 'resume' });
    // What the store gives back (JSON) unpacks to what XState persisted.
    expect(unpackSnapshot(json(packed))).toEqual(json(persisted));
    // The argument is left as it was.
    expect(persisted.children.plan.snapshot.input.context).toBe(context);
  });

  it('keeps a member that only equals a context object: identity decides, never equality', () => {
    const persisted = {
      context,
      children: { plan: { snapshot: { input: { kind: 'start', context: json(context) } } } },
    };
    expect(packSnapshot(persisted)).toBe(persisted);
  });

  it('leaves a snapshot without children, or with nothing shared, as it is', () => {
    const plain = { status: 'done', value: 'completed', context, children: {} };
    expect(packSnapshot(plain)).toBe(plain);
    expect(unpackSnapshot(plain)).toBe(plain);
    expect(packSnapshot('not a snapshot')).toBe('not a snapshot');
  });

  it('refuses a reference that leads nowhere (a snapshot altered after it was written)', () => {
    const broken = {
      context: { labels: {} },
      children: { plan: { snapshot: { input: {} } } },
      '$toolwarden.refs': { plan: { context: ['batch', 'pending', 3] } },
    };
    expect(() => unpackSnapshot(broken)).toThrow(/child "plan" refers to context\/batch\/pending\/3/);
  });

  it('stores a run snapshot taken while the planner runs with its context once, and restores it', async () => {
    let answer!: (result: PlanResult) => void;
    const { runtime, turns, planner } = addingRuntime();
    turns.push(...Array.from({ length: 10 }, (_, i) => addCall(i)));
    planner.planResume = async () =>
      turns.shift() ?? new Promise<PlanResult>((resolve) => (answer = resolve));
    const run = runtime.start({ runId: 'run-size', messages: [{ role: 'user', content: 'add ten times' }] });
    await expect.poll(() => run.context.turn).toBe(11);
    await expect.poll(() => typeof answer).toBe('function');
    const persisted = run.getPersistedSnapshot();
    // The planner turn in flight is a request to the `steps` actor, not a child holding the context.
    expect(JSON.stringify(persisted).length).toBeLessThan(JSON.stringify(run.context).length * 1.2);
    expect(packSnapshot(persisted)).toBe(persisted);

    const restored = createActor(runtime.machine, {
      snapshot: unpackSnapshot(json(persisted)) as never,
      input: undefined as never,
    });
    expect(json(persistedSnapshotOf(restored))).toEqual(json(persisted));
    run.cancel('done measuring');
    answer({ finalResponse: { text: 'unused' } });
  });

  it('restores a snapshot stored with a child actor per step (before the steps actor): the step runs again', async () => {
    let answer!: (result: PlanResult) => void;
    const { runtime, turns, planner } = addingRuntime();
    turns.push(addCall(1));
    planner.planResume = async () =>
      turns.shift() ?? new Promise<PlanResult>((resolve) => (answer = resolve));
    const run = runtime.start({ runId: 'run-old', messages: [{ role: 'user', content: 'add' }] });
    await expect.poll(() => run.context.turn).toBe(2);
    // The turn starts before its planner call does (the steps actor, the turn scheduler).
    await expect.poll(() => typeof answer).toBe('function');
    const current = json(run.getPersistedSnapshot());
    run.cancel('replaced by its old form');
    answer({ finalResponse: { text: 'unused' } });
    // The same moment as the previous release stored it: the planner turn a child actor holding
    // the context (packed away), no `steps` child.
    const old = {
      ...current,
      children: {
        '0.run.planning': {
          snapshot: { status: 'active', input: { kind: 'resume' } },
          src: 'plan',
          syncSnapshot: false,
        },
      },
      '$toolwarden.refs': { '0.run.planning': { context: [] } },
    };

    const restored = createActor(runtime.machine, {
      snapshot: unpackSnapshot(old) as never,
      input: undefined as never,
    });
    turns.push({ finalResponse: { text: 'restored' } });
    restored.start();
    await waitFor(restored, (snapshot) => snapshot.status === 'done', { timeout: 2_000 });
    expect(restored.getSnapshot().context.flow.finalResponse).toEqual({ text: 'restored' });
  });
});

/** A runtime with `calc.add` and a planner answering from `turns` (its `planResume` replaceable). */
function addingRuntime() {
  const add = defineTool({
    id: 'calc.add',
    description: 'Adds',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => ({ sum: a + b }),
  });
  const turns: PlanResult[] = [];
  const planner = {
    planStart: async () => turns.shift()!,
    planResume: async (): Promise<PlanResult> => turns.shift()!,
  };
  const runtime = createRuntime({ agent: { id: 'calc' }, tools: [add], telemetry: false, planner });
  return { runtime, turns, planner };
}

const addCall = (a: number): PlanResult => ({ toolCalls: [{ name: 'calc.add', input: { a, b: 1 } }] });
