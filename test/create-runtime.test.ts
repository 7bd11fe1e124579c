import { describe, expect, it } from 'vitest';
import { createRuntime } from '../create-runtime.ts';
import { definePlugin } from '../plugins/define-plugin.ts';
import { scriptedPlanner } from '../run/planner.ts';

// The public createRuntime wires the inspector from the entry points' floor (issue 37 item 4): the
// runtime's core never imports inspector/, and the sugar must behave as the core option did.
describe('createRuntime({ inspector }) at the root (create-runtime.ts)', () => {
  it('runs the inspector plugin after the app’s plugins, turns forks on, and closes its server with the runtime', async () => {
    const order: string[] = [];
    const mine = definePlugin({ name: 'mine', onEvent: () => void order.push('mine') });
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: scriptedPlanner([{ finalResponse: { text: 'done' } }, { finalResponse: { text: 'again' } }]),
      telemetry: false,
      plugins: [mine],
      inspector: { port: 0, onListening: () => {} },
    });
    const server = await runtime.inspector!.start();
    const run = runtime.start({ messages: [{ role: 'user', content: 'hi' }] });
    await run.result();
    expect(order.length).toBeGreaterThan(0);
    expect(runtime.inspector!.store.log(run.runId).length).toBeGreaterThan(0);
    // forks default on with the inspector: the page forks runs from their steps
    await expect(runtime.fork(run.runId, { atEvent: 1 })).resolves.toBeDefined();
    await runtime.close();
    await expect(fetch(server.url)).rejects.toThrow();
  });

  it('without the option has no inspector and forks stay off', async () => {
    const runtime = createRuntime({ agent: { id: 'a' }, planner: scriptedPlanner([]), telemetry: false });
    expect(runtime.inspector).toBeUndefined();
    await runtime.close();
  });
});
