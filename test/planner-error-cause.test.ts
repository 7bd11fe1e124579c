import { describe, expect, it } from 'vitest';
import { createRuntime } from '../runtime/create-runtime.ts';
import { unpackSnapshot } from '../runtime/durable/snapshot-codec.ts';

/** A provider error as model adapters throw it: the HTTP status outside, the socket's reason inside. */
class ModelUnavailableError extends Error {
  override readonly name = 'ModelUnavailableError';
}

const failingPlanner = (error: unknown) => ({
  planStart: async () => {
    throw error;
  },
  planResume: async () => {
    throw error;
  },
});

describe('a planner error keeps its cause chain (issue 38 item 5)', () => {
  it('keeps ECONNREFUSED under the provider error in the outcome, the stored run and run_failed', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' });
    const error = new ModelUnavailableError('model server answered 503 Service Unavailable', {
      cause: refused,
    });
    const runtime = createRuntime({ agent: { id: 'a' }, planner: failingPlanner(error), telemetry: false });
    const out = await runtime.start({ runId: 'r1', messages: [{ role: 'user', content: 'hi' }] }).result();
    const expected = {
      name: 'ModelUnavailableError',
      message: 'Planner failed: model server answered 503 Service Unavailable',
      recoverable: false,
      cause: { name: 'ToolError', message: 'connect ECONNREFUSED 127.0.0.1:8080', recoverable: false },
    };
    expect(out.status).toBe('failed');
    expect(out.error).toEqual(expected);
    const stored = await runtime.load('r1');
    const snapshot = unpackSnapshot(stored!.snapshot) as { context: { flow: { error: unknown } } };
    expect(snapshot.context.flow.error).toEqual(expected);
    const events = [];
    for await (const record of runtime.events('r1', { follow: false })) events.push(record.event);
    expect(events.find((event) => event.type === 'run_failed')).toMatchObject({ error: expected });
    await runtime.close();
  });

  it('bounds the chain: a cycle ends, a long chain is cut, a huge message is clipped', async () => {
    const a = new Error('a'.repeat(100_000));
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    const runtime = createRuntime({ agent: { id: 'a' }, planner: failingPlanner(b), telemetry: false });
    const out = await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();
    const links = [];
    for (let at = out.error; at; at = at.cause) links.push(at);
    expect(links.map((link) => link.message.slice(0, 20))).toEqual(['Planner failed: b', 'a'.repeat(20)]);
    expect(links[1]!.message.length).toBe(4_097);

    let deep: Error = new Error('root');
    for (let i = 0; i < 40; i++) deep = new Error(`link ${i}`, { cause: deep });
    const runtime2 = createRuntime({ agent: { id: 'a' }, planner: failingPlanner(deep), telemetry: false });
    const out2 = await runtime2.start({ messages: [{ role: 'user', content: 'hi' }] }).result();
    const chain = [];
    for (let at = out2.error; at; at = at.cause) chain.push(at.message);
    expect(chain.length).toBe(17);
    expect(chain.at(-1)).toBe('(cause chain truncated)');
    await runtime.close();
    await runtime2.close();
  });

  it('keeps what a planner throws that is no Error as the message', async () => {
    const runtime = createRuntime({ agent: { id: 'a' }, planner: failingPlanner('quota'), telemetry: false });
    const out = await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();
    expect(out.error).toEqual({ name: 'PlannerError', message: 'Planner failed: quota', recoverable: false });
    await runtime.close();
  });
});
