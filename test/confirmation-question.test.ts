import { describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { createRuntime } from '../runtime/create-runtime.ts';

describe('a confirmation has one name for what is asked (issue 28 item 7)', () => {
  it('await_confirmation.confirmation.question is run.awaiting.question; prompt stays as a deprecated alias', async () => {
    const runtime = createRuntime({
      agent: { id: 'support' },
      telemetry: false,
      planner: scriptedPlanner([
        { await: { confirmation: { id: 'refund', prompt: 'Refund order 42?' } } },
        { finalResponse: { text: 'Refunded.' } },
      ]),
    });
    const run = runtime.start({ messages: [{ role: 'user', content: 'Refund my order' }] });
    const events: RunEvent[] = [];
    run.events$.subscribe((event) => events.push(event));
    await expect.poll(() => run.status).toBe('awaiting');

    const asked = events.find((event) => event.type === 'await_confirmation');
    expect(asked?.type === 'await_confirmation' && asked.confirmation).toMatchObject({
      id: 'refund',
      question: 'Refund order 42?',
      prompt: 'Refund order 42?',
    });
    expect(run.awaiting).toMatchObject({ kind: 'confirmation', question: 'Refund order 42?' });

    await run.confirm({ id: 'refund', approved: true });
    expect((await run.result()).finalResponse?.text).toBe('Refunded.');
    await runtime.close();
  });
});
