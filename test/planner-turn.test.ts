import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

const lookup = defineTool({
  id: 'kb.lookup',
  description: 'Looks a word up',
  input: z.object({ word: z.string() }),
  execute: async ({ word }) => ({ definition: `${word}: a word` }),
});

describe('planner_turn: the model side of each turn, in the run log (issue 38 item 5)', () => {
  it('records what each turn was sent and answered, its tokens, when and how long', async () => {
    const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const planner = {
      planStart: async () => {
        await delay(30);
        return {
          toolCalls: [{ name: 'kb.lookup', toolCallId: 'call_0', input: { word: 'actor' } }],
          usage: { inputTokens: 120, outputTokens: 14 },
        };
      },
      planResume: async () => ({
        finalResponse: { text: 'actor: a word' },
        usage: { inputTokens: 180, outputTokens: 9 },
      }),
    };
    const runtime = createRuntime({ agent: { id: 'kb' }, planner, tools: [lookup], telemetry: false });
    const before = Date.now();
    const out = await runtime.start({ runId: 'r', messages: [{ role: 'user', content: 'actor?' }] }).result();
    const turns = [];
    for await (const record of runtime.events('r', { follow: false }))
      if (record.event.type === 'planner_turn') turns.push(record.event);
    expect(turns).toHaveLength(2);
    expect(turns[0]).toMatchObject({
      turnId: 'r:t1',
      kind: 'start',
      messages: 1,
      tools: ['kb.lookup'],
      result: { toolCalls: [{ name: 'kb.lookup', toolCallId: 'call_0', input: { word: 'actor' } }] },
      usage: { inputTokens: 120, outputTokens: 14 },
    });
    expect(turns[0]!.startedAt).toBeGreaterThanOrEqual(before);
    expect(turns[0]!.durationMs).toBeGreaterThanOrEqual(25);
    // Turn 2 was sent the user's message, the call and its result.
    expect(turns[1]).toMatchObject({ turnId: 'r:t2', kind: 'resume', messages: 3 });
    expect(out.transcript.slice(0, turns[1]!.messages).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
    ]);
    expect(out.usage.totalTokens).toBe(120 + 14 + 180 + 9);
    await runtime.close();
  });

  it('records a failed turn with its error and causes', async () => {
    const planner = {
      planStart: async () => {
        throw new Error('upstream 503', { cause: new Error('connect ECONNREFUSED 10.0.0.1:443') });
      },
      planResume: async () => ({ finalResponse: { text: '' } }),
    };
    const runtime = createRuntime({ agent: { id: 'kb' }, planner, telemetry: false });
    await runtime.start({ runId: 'f', messages: [{ role: 'user', content: 'hi' }] }).result();
    const turns = [];
    for await (const record of runtime.events('f', { follow: false }))
      if (record.event.type === 'planner_turn') turns.push(record.event);
    expect(turns).toEqual([
      expect.objectContaining({
        kind: 'start',
        error: expect.objectContaining({
          message: 'Planner failed: upstream 503',
          cause: expect.objectContaining({ message: 'connect ECONNREFUSED 10.0.0.1:443' }),
        }),
      }),
    ]);
    await runtime.close();
  });
});
