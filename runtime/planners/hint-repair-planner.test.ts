import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askOnMissingFields } from '../../policies/index.ts';
import type { RunEvent } from '../../run/run-events.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { createRuntime } from '../create-runtime.ts';
import type { RunHandle } from '../run-handle.ts';
import { hintRepairPlanner, valuesInAnswer } from './hint-repair-planner.ts';

const executed: unknown[] = [];
const book = defineTool({
  id: 'travel.book_flight',
  description: 'Books a flight',
  input: z.object({ from: z.string(), to: z.string().describe('Arrival airport code') }),
  examples: [{ from: 'SFO', to: 'JFK' }],
  execute: async (input) => {
    executed.push(input);
    return { booked: true };
  },
});

/** Answers every clarification of the run with `answer`, as the app would. */
function answerAll(run: RunHandle, answer: string): RunEvent[] {
  const events: RunEvent[] = [];
  run.events$.subscribe((event) => {
    events.push(event);
    if (event.type === 'await_clarification') {
      setImmediate(() => void run.provideClarification({ id: event.clarification.id, answer }));
    }
  });
  return events;
}

describe('hintRepairPlanner', () => {
  it('asks for missing fields itself when `ask` allows, and sends the call completed by the answer', async () => {
    executed.length = 0;
    const runtime = createRuntime({
      agent: { id: 'test' },
      telemetry: false,
      tools: [book],
      planner: hintRepairPlanner({
        firstCalls: () => [{ name: book.id, input: { from: 'SFO' } }],
        ask: true,
      }),
    });
    const run = runtime.start({ messages: [{ role: 'user', content: 'Book me a flight from SFO' }] });
    const events = answerAll(run, 'To Boston.\n{"to": "BOS"}');
    const outcome = await run.result();
    await runtime.close();

    expect(outcome.status).toBe('completed');
    expect(executed).toEqual([{ from: 'SFO', to: 'BOS' }]);
    const asked = events.find((e) => e.type === 'await_clarification');
    expect(asked).toMatchObject({ clarification: { missingFields: ['to'], restrictToTool: book.id } });
  });

  it("answers a policy's question (askOnMissingFields) without repairing that call a second time", async () => {
    executed.length = 0;
    const runtime = createRuntime({
      agent: { id: 'test' },
      telemetry: false,
      tools: [book],
      policies: [askOnMissingFields()],
      planner: hintRepairPlanner({
        firstCalls: () => [{ name: book.id, input: { from: 'SFO' } }],
        ask: true,
      }),
    });
    const run = runtime.start({ messages: [{ role: 'user', content: 'Book me a flight from SFO' }] });
    const events = answerAll(run, '{"to": "BOS"}');
    const outcome = await run.result();
    await runtime.close();

    expect(executed).toEqual([{ from: 'SFO', to: 'BOS' }]);
    expect(events.filter((e) => e.type === 'await_clarification')).toHaveLength(1);
    expect(outcome.toolResults.map((r) => (r.error ? 'failed' : 'ok'))).toEqual(['failed', 'ok']);
  });

  it('without anyone to ask, fills missing fields from the exampleInput', async () => {
    executed.length = 0;
    const runtime = createRuntime({
      agent: { id: 'test' },
      telemetry: false,
      tools: [book],
      planner: hintRepairPlanner({ firstCalls: () => [{ name: book.id, input: { from: 'SFO' } }] }),
    });
    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'Book' }] }).result();
    await runtime.close();
    expect(outcome.status).toBe('completed');
    expect(executed).toEqual([{ from: 'SFO', to: 'JFK' }]);
  });

  it('reads the values of an answer from JSON, whole or on its last line; prose alone gives none', () => {
    expect(valuesInAnswer('{"to": "BOS"}')).toEqual({ to: 'BOS' });
    expect(valuesInAnswer('The specific file is a.pdf.\n{"source": "a.pdf"}')).toEqual({ source: 'a.pdf' });
    expect(valuesInAnswer('Boston, please.')).toEqual({});
    expect(valuesInAnswer('[1, 2]')).toEqual({});
  });
});
