import { describe, expect, it } from 'vitest';
import { createRuntime } from '../create-runtime.ts';
import { inspectorPlugin } from '../inspector/inspector-plugin.ts';
import { scriptedPlanner } from '../run/planner.ts';

const planner = () => scriptedPlanner([{ finalResponse: { text: 'ok' } }]);
const inspectOf = (actor: unknown) => (actor as { options: { inspect?: unknown } }).options.inspect;

describe('createRuntime({ inspector })', () => {
  it('installs no inspection observer at all when the inspector is off (zero cost)', async () => {
    for (const inspector of [undefined, false] as const) {
      const runtime = createRuntime({ agent: { id: 'a' }, planner: planner(), telemetry: false, inspector });
      const run = runtime.start({ messages: [{ role: 'user', content: 'hi' }] });
      expect(runtime.inspector).toBeUndefined();
      expect(inspectOf(run.actor)).toBeUndefined();
      await run.result();
    }
  });

  it("with `inspector: { port }` serves the page and records the runtime's runs", async () => {
    const urls: string[] = [];
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: planner(),
      telemetry: false,
      inspector: { port: 0, onListening: (server) => urls.push(server.url) },
    });
    try {
      const server = await runtime.inspector!.start();
      expect(urls).toEqual([server.url]);
      const run = runtime.start({ runId: 'r1', messages: [{ role: 'user', content: 'hi' }] });
      expect(inspectOf(run.actor)).toBeDefined();
      await run.result();
      const page = await fetch(server.url);
      expect(page.status).toBe(200);
      const runs = await (await fetch(`${server.origin}/api/runs?token=${server.token}`)).json();
      expect(runs.runs).toEqual([expect.objectContaining({ runId: 'r1', status: 'completed' })]);
    } finally {
      await runtime.inspector?.close();
    }
  });

  it('composes with other plugins: each gets every RunEvent', async () => {
    const seen: string[] = [];
    const inspector = inspectorPlugin({ serve: false });
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: planner(),
      telemetry: false,
      plugins: [{ name: 'recorder', onEvent: (event) => seen.push(event.type) }, inspector],
    });
    const run = runtime.start({ runId: 'r1', messages: [{ role: 'user', content: 'hi' }] });
    await run.result();
    expect(inspector.store.log('r1').map((entry) => entry.type)).toEqual(seen);
  });
});
