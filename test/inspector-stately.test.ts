import { createInspector, createWebSocketInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { InspectionStore } from '../inspector/inspection-store.ts';
import { inspectorPlugin } from '../inspector/inspector-plugin.ts';
import { type InspectorServer, startInspectorServer } from '../inspector/inspector-server.ts';
import { toGraphModel } from '../machines/diagram/graph-model.ts';
import { runMachine } from '../machines/run-machine.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

const graph = toGraphModel(runMachine);
const edgeTo = (source: string, guard: string) =>
  graph.edges.find((edge) => edge.source === source && edge.guard === guard)!.id;
const planner = () =>
  scriptedPlanner([
    { await: { clarification: { id: 'plan', question: 'Which plan?', missingFields: ['plan'] } } },
    { finalResponse: { text: 'Done' } },
  ]);
const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

let server: InspectorServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('@statelyai/inspect compatibility (offline, no stately.ai UI)', () => {
  it("takes createWebSocketInspector's events on /ws and shows them like a native run", async () => {
    const store = new InspectionStore({ graph });
    server = await startInspectorServer({ store, svg: '<svg/>' });
    const stately = createWebSocketInspector({ url: server.wsUrl });
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner: planner(),
      inspect: stately.inspect,
      telemetry: false,
    });
    try {
      const run = runtime.start({ runId: 'ws-run', messages: [{ role: 'user', content: 'hi' }] });
      await until(() => store.run('ws-run')?.activeStates.includes('run.awaiting.clarification') === true);
      expect(store.run('ws-run')).toMatchObject({
        source: 'stately',
        status: 'awaiting',
        lastTransition: { edgeIds: [edgeTo('run.planning', 'planAwaitsClarification')] },
      });
      await run.provideClarification({ id: 'plan', answer: 'pro' });
      await until(() => store.run('ws-run')?.status === 'completed');
      const log = store.log('ws-run');
      expect(
        log.filter((entry) => entry.kind === 'state').map((entry) => (entry.data as { state: string }).state),
      ).toEqual(expect.arrayContaining(['awaiting.clarification', 'completed']));
      expect(
        log.some((entry) => entry.kind === 'xstate_event' && entry.type === 'provide.clarification'),
      ).toBe(true);
    } finally {
      stately.stop();
    }
  });

  it("passes Stately's inspect observer every event, alongside the inspector plugin", async () => {
    const received: StatelyInspectionEvent[] = [];
    const stately = createInspector({ send: (event) => received.push(event) });
    const inspector = inspectorPlugin({ serve: false });
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner: planner(),
      inspect: stately.inspect,
      plugins: [inspector],
      telemetry: false,
    });
    const run = runtime.start({ runId: 'both', messages: [{ role: 'user', content: 'hi' }] });
    await until(() => run.status === 'awaiting');
    await until(() =>
      received.some(
        (event) => event.type === '@xstate.snapshot' && JSON.stringify(event).includes('clarification'),
      ),
    );
    expect(new Set(received.map((event) => event.type))).toEqual(
      new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']),
    );
    expect(inspector.store.run('both')?.activeStates).toContain('run.awaiting.clarification');
  });
});
