import { describe, expect, it } from 'vitest';
import { assign, createMachine, fromPromise, not, setup } from 'xstate';
import { edgeIdOf } from '../machines/diagram/edge-id.ts';
import { type GraphEdge, toGraphModel } from '../machines/diagram/graph-model.ts';
import { runMachine } from '../machines/run-machine.ts';
import { runSteps } from '../machines/run-steps.ts';

type Config = {
  id?: string;
  type?: string;
  initial?: string;
  states?: Record<string, Config>;
  on?: Record<string, unknown>;
  always?: unknown;
  after?: Record<string, unknown>;
  onDone?: unknown;
  invoke?: unknown;
};

interface Expected {
  id: string;
  source: string;
  targets: string[];
  guard?: string;
  actions: string[];
}

/**
 * An independent walk over the raw config (`machine.config`), not XState's StateNode objects:
 * resolves targets by XState's rules (`#id`, `.child`, sibling key or path) and names edges the
 * way the model promises (`<source>:<event key>:<index>`).
 */
function walkConfig(root: Config, machineId: string): { states: string[]; edges: Expected[] } {
  const states: string[] = [];
  const edges: Expected[] = [];
  const list = <T>(value: T | T[] | undefined): T[] =>
    value === undefined ? [] : Array.isArray(value) ? value : [value];
  const name = (value: unknown): string =>
    typeof value === 'string' ? value : ((value as { type?: string }).type ?? 'inline');
  const visit = (config: Config, id: string, parent: string | null) => {
    states.push(id);
    const resolve = (target: string) => {
      if (target.startsWith('#')) return target.slice(1);
      if (target.startsWith('.')) return `${id}${target}`;
      return `${parent}.${target}`;
    };
    const add = (key: string, transitions: unknown) => {
      list(transitions).forEach((raw, index) => {
        const t = (typeof raw === 'string' ? { target: raw } : raw) as {
          target?: string | string[];
          guard?: unknown;
          actions?: unknown;
        };
        const edge: Expected = {
          id: `${id}:${key}:${index}`,
          source: id,
          targets: list(t.target).map(resolve),
          actions: list(t.actions).map(name),
        };
        if (t.guard !== undefined) edge.guard = name(t.guard);
        edges.push(edge);
      });
    };
    for (const [event, transitions] of Object.entries(config.on ?? {})) add(event, transitions);
    if (config.onDone) add('done.state', config.onDone);
    for (const invoke of list(config.invoke) as { src: string; onDone?: unknown; onError?: unknown }[]) {
      if (invoke.onDone) add(`done.invoke.${invoke.src}`, invoke.onDone);
      if (invoke.onError) add(`error.invoke.${invoke.src}`, invoke.onError);
    }
    for (const [delay, transitions] of Object.entries(config.after ?? {})) add(`after.${delay}`, transitions);
    if (config.always) add('always', config.always);
    for (const [key, child] of Object.entries(config.states ?? {})) visit(child, `${id}.${key}`, id);
  };
  visit(root, machineId, null);
  return { states, edges };
}

const pick = (edge: GraphEdge): Expected => {
  const out: Expected = { id: edge.id, source: edge.source, targets: edge.targets, actions: edge.actions };
  if (edge.guard !== undefined) out.guard = edge.guard;
  return out;
};
const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);

describe('graph model of the run machine', () => {
  const graph = toGraphModel(runMachine);
  const expected = walkConfig(runMachine.config as Config, runMachine.id);

  it('has every state of the run machine, found by an independent walk of its config', () => {
    expect(graph.states.map((state) => state.id).sort()).toEqual([...expected.states].sort());
    expect(graph.states.map((state) => state.id)).toEqual(
      expect.arrayContaining([
        'run',
        'run.planning',
        'run.admitting',
        'run.routing',
        'run.awaiting.clarification',
      ]),
    );
  });

  it('has every transition with its id, guard, targets and actions, always transitions included', () => {
    expect(expected.edges.length).toBeGreaterThan(30);
    expect(graph.edges.map(pick).sort(byId)).toEqual([...expected.edges].sort(byId));
    expect(new Set(graph.edges.map((edge) => edge.id)).size).toBe(graph.edges.length);
  });

  it('keeps the always transitions that machine.toJSON() leaves out', () => {
    const always = graph.edges.filter((edge) => edge.kind === 'always');
    expect(always.map((edge) => edge.id)).toEqual(
      expect.arrayContaining([
        'run.admitting:always:0',
        'run.routing:always:0',
        'run.awaiting.approved:always:0',
      ]),
    );
    const json = JSON.stringify(runMachine.toJSON());
    expect(json).not.toContain('hasAdmittedCalls');
    expect(graph.edges.find((edge) => edge.id === 'run.awaiting.approved:always:0')).toMatchObject({
      kind: 'always',
      eventType: '',
      guard: 'hasAdmittedCalls',
      targets: ['run.executing'],
    });
  });

  it('names the answers of `steps` by event type, with the guard order as index', () => {
    const planning = graph.edges.filter(
      (edge) => edge.source === 'run.planning' && edge.eventType === 'plan.done',
    );
    expect(planning.map((edge) => edge.index)).toEqual(planning.map((_, index) => index));
    expect(planning.find((edge) => edge.guard === 'planAwaitsClarification')).toMatchObject({
      id: `run.planning:plan.done:${planning.findIndex((edge) => edge.guard === 'planAwaitsClarification')}`,
      kind: 'event',
      label: 'plan.done',
      targets: ['run.awaiting.clarification'],
    });
    expect(graph.edges.find((edge) => edge.id === 'run.planning:plan.error:0')).toMatchObject({
      kind: 'event',
      targets: ['run.failed'],
    });
  });

  it('names done and error transitions of invokes by src, with the guard order as index', () => {
    const invoking = setup({
      actors: { plan: fromPromise(async () => 1) },
      guards: { big: () => false },
    }).createMachine({
      id: 'm',
      initial: 'planning',
      states: {
        planning: {
          invoke: {
            src: 'plan',
            onDone: [{ guard: 'big', target: 'done' }, { target: 'failed' }],
            onError: { target: 'failed' },
          },
        },
        done: { type: 'final' },
        failed: { type: 'final' },
      },
    });
    const edges = toGraphModel(invoking).edges.filter(
      (edge) => edge.source === 'm.planning' && edge.kind === 'done.invoke',
    );
    expect(edges.map((edge) => edge.index)).toEqual([0, 1]);
    expect(edges[0]).toMatchObject({
      id: 'm.planning:done.invoke.plan:0',
      label: 'done(plan)',
      invoke: 'plan',
      guard: 'big',
      targets: ['m.done'],
    });
    expect(
      toGraphModel(invoking).edges.find((edge) => edge.id === 'm.planning:error.invoke.plan:0'),
    ).toMatchObject({
      kind: 'error.invoke',
      targets: ['m.failed'],
    });
  });

  it('describes states: type, initial, order, invoke src, entry actions, children', () => {
    const states = new Map(graph.states.map((state) => [state.id, state]));
    expect(states.get('run')).toMatchObject({
      type: 'compound',
      initial: 'run.planning',
      order: 0,
      parent: null,
    });
    expect(states.get('run.awaiting')).toMatchObject({
      type: 'compound',
      initial: 'run.awaiting.clarification',
      path: ['awaiting'],
    });
    expect(states.get('run')?.invoke.map((def) => def.src)).toEqual(['runSteps']);
    expect(states.get('run.planning')?.entry).toEqual(['requestPlan']);
    expect(states.get('run.completed')).toMatchObject({ type: 'final', history: false, tags: [] });
    const orders = graph.states.map((state) => state.order);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
  });

  it('is the same for the runtime copy made with provide()', () => {
    const provided = runMachine.provide({ actors: { runSteps: runSteps({ plan: async () => ({}) }) } });
    expect(toGraphModel(provided)).toEqual(graph);
  });

  it('round-trips through JSON unchanged (it is the JSON export)', () => {
    expect(JSON.parse(JSON.stringify(graph))).toEqual(graph);
  });
});

describe('graph model of other machine features', () => {
  const machine = setup({
    guards: { isReady: () => true },
    delays: { slow: 2000 },
  }).createMachine({
    id: 'player',
    initial: 'idle',
    states: {
      idle: {
        tags: ['waiting'],
        on: { PLAY: { guard: not('isReady'), target: 'playing' } },
        after: { 500: 'playing', slow: { target: 'idle', reenter: true } },
      },
      playing: {
        type: 'parallel',
        states: {
          audio: {
            initial: 'on',
            states: { on: { on: { MUTE: 'off' } }, off: {}, hist: { type: 'history', history: 'deep' } },
          },
          video: { initial: 'hd', states: { hd: { on: { SLOW: 'sd' } }, sd: { type: 'final' } } },
        },
        onDone: 'done',
        on: { STOP: { target: ['#player.idle'], actions: assign({}) } },
      },
      done: { type: 'final' },
    },
  });
  const graph = toGraphModel(machine);
  const edge = (id: string) => graph.edges.find((candidate) => candidate.id === id);

  it('classifies after, done.state, higher-order guards, inline actions and reenter', () => {
    expect(edge('player.idle:after.500:0')).toMatchObject({
      kind: 'after',
      delay: 500,
      label: 'after 500ms',
    });
    expect(edge('player.idle:after.slow:0')).toMatchObject({ kind: 'after', delay: 'slow', reenter: true });
    expect(edge('player.idle:PLAY:0')).toMatchObject({ guard: 'not(isReady)' });
    expect(edge('player.playing:done.state:0')).toMatchObject({
      kind: 'done.state',
      targets: ['player.done'],
    });
    expect(edge('player.playing:STOP:0')).toMatchObject({ actions: ['xstate.assign'] });
  });

  it('records parallel, history and tags', () => {
    const states = new Map(graph.states.map((state) => [state.id, state]));
    expect(states.get('player.playing')).toMatchObject({
      type: 'parallel',
      initial: null,
      children: ['player.playing.audio', 'player.playing.video'],
    });
    expect(states.get('player.playing.audio.hist')).toMatchObject({ type: 'history', history: 'deep' });
    expect(states.get('player.idle')?.tags).toEqual(['waiting']);
  });

  it('gives a taken transition the same id from edgeIdOf as in the model', () => {
    const untyped = createMachine({
      id: 'm',
      initial: 'a',
      states: { a: { on: { GO: [{ target: 'b' }, { target: 'a' }] } }, b: {} },
    });
    const model = toGraphModel(untyped);
    const transitions = untyped.root.states.a!.transitions.get('GO')!;
    expect(transitions.map(edgeIdOf)).toEqual(model.edges.map((e) => e.id));
    expect(transitions.map(edgeIdOf)).toEqual(['m.a:GO:0', 'm.a:GO:1']);
  });
});
