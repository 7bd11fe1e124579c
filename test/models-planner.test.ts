/**
 * modelPlanner (issue 11, first slice): an AI SDK 6 language model plans a run. The model here is
 * the AI SDK's own MockLanguageModelV3; the requests it records are what a provider would send.
 */
import type {
  LanguageModelV2,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { APICallError } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ModelPlannerError, modelPlanner } from '../models/model-planner.ts';
import { PROVIDER_TOOL_NAME, toolNameMap } from '../models/tool-names.ts';
import { restrictOnInvalidArguments } from '../policies/index.ts';
import type { RunEvent } from '../run/run-events.ts';
import { defineTool } from '../tools/define-tool.ts';
import { allEvents, testRuntime } from './run-fixtures.ts';

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  execute: async ({ email }) => ({ id: `cus_${email}` }),
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const answer = (content: LanguageModelV3GenerateResult['content']): LanguageModelV3GenerateResult => ({
  content,
  finishReason: {
    unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop',
    raw: undefined,
  },
  usage,
  warnings: [],
});
const toolCall = (input: string, toolCallId = 'call_0') => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName: 'crm__upsert_profile',
  input,
});

function scripted(answers: LanguageModelV3GenerateResult[]) {
  const seen: LanguageModelV3CallOptions[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options);
      const next = answers.shift();
      if (!next) throw new Error('script exhausted');
      return next;
    },
  });
  return { model, seen };
}

describe('modelPlanner', () => {
  it('runs the model’s tool call, repairs it from the hint it sends back, and ends on its text', async () => {
    const { model, seen } = scripted([
      answer([{ type: 'text', text: 'Adding ada.' }, toolCall('{"email":"ada@example.com","plan":"PRO"}')]),
      answer([toolCall('{"email":"ada@example.com","plan":"pro"}', 'call_0')]),
      answer([{ type: 'text', text: 'Ada is on pro.' }]),
    ]);
    const run = testRuntime({
      planner: modelPlanner({ model, system: 'You manage CRM profiles.' }),
      tools: [upsert],
      policies: [restrictOnInvalidArguments({ maxRetries: 2 })],
    }).start({ runId: 'm1', messages: [{ role: 'user', content: 'Add ada@example.com as pro' }] });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('Ada is on pro.');
    // Turn 1: the tools under provider-safe names, the system text first.
    expect(seen[0]?.tools?.map((tool) => tool.name)).toEqual(['crm__upsert_profile']);
    expect(seen[0]?.prompt[0]).toEqual({ role: 'system', content: 'You manage CRM profiles.' });
    // Turn 2: restricted to the tool after an invalid call, and the hint is in the prompt,
    // paired with the model's own id.
    expect(seen[1]?.toolChoice).toEqual({ type: 'tool', toolName: 'crm__upsert_profile' });
    const toolMessage = seen[1]?.prompt.find((m) => m.role === 'tool');
    const part = toolMessage?.content[0];
    expect(part).toMatchObject({
      type: 'tool-result',
      toolCallId: 'call_0',
      toolName: 'crm__upsert_profile',
    });
    const rendered = JSON.parse((part as { output: { value: string } }).output.value);
    expect(rendered).toMatchObject({
      reason: 'invalid_arguments',
      issues: [{ path: 'plan', allowed: ['free', 'pro'] }],
    });
    expect(rendered.next).toContain('crm__upsert_profile');
    // The text that came with the first call is kept as a planner note.
    const notes = (await allEvents(run)).flatMap((event) =>
      event.type === 'planner_note' ? [event.note] : [],
    );
    expect(notes).toEqual(['Adding ada.']);
    expect(outcome.toolResults.at(-1)).toMatchObject({ executed: true, providerToolCallId: 'call_0' });
    // Three model calls of 10 + 5 tokens each, summed on the run.
    expect(outcome.usage).toEqual({ inputTokens: 30, outputTokens: 15, totalTokens: 45 });
  });

  it('ends the run cleanly at caps.maxTotalTokens: the finalizing turn answers, reason token_cap', async () => {
    const { model, seen } = scripted([
      answer([toolCall('{"email":"ada@example.com","plan":"pro"}', 'call_0')]),
      answer([toolCall('{"email":"bob@example.com","plan":"pro"}', 'call_1')]),
      answer([{ type: 'text', text: 'Stopped: out of tokens.' }]),
    ]);
    const outcome = await testRuntime({
      planner: modelPlanner({ model }),
      tools: [upsert],
      caps: { maxTotalTokens: 20 },
    })
      .start({ messages: [{ role: 'user', content: 'Add ada and bob as pro' }] })
      .result();
    // 15 tokens after turn 1 (under 20), 30 after turn 2: the run finalizes after that batch.
    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'token_cap' });
    expect(outcome.finalResponse?.text).toBe('Stopped: out of tokens.');
    expect(seen).toHaveLength(3);
    expect(seen[2]?.tools ?? []).toEqual([]); // the finalizing turn offers no tools
    expect(outcome.usage.totalTokens).toBe(45);
  });

  it('sends only the error message with hints: plain', async () => {
    const { model, seen } = scripted([
      answer([toolCall('{"email":"ada@example.com"}')]),
      answer([{ type: 'text', text: 'I need the plan.' }]),
    ]);
    await testRuntime({ planner: modelPlanner({ model, hints: 'plain' }), tools: [upsert] })
      .start({ messages: [{ role: 'user', content: 'Add ada' }] })
      .result();
    const part = seen[1]?.prompt.find((m) => m.role === 'tool')?.content[0] as {
      output: { type: string; value: string };
    };
    expect(part.output.type).toBe('error-text');
    expect(part.output.value).toMatch(/^Argument validation failed for crm.upsert_profile/);
    expect(() => JSON.parse(part.output.value)).toThrow();
  });

  it('asks for a final answer with no tools when the run finalizes', async () => {
    const { model, seen } = scripted([
      answer([toolCall('{"email":"a@b.co","plan":"pro"}')]),
      answer([{ type: 'text', text: 'Done, out of tool calls.' }]),
    ]);
    const outcome = await testRuntime({
      planner: modelPlanner({ model }),
      tools: [upsert],
      caps: { maxToolCalls: 1 },
    })
      .start({ messages: [{ role: 'user', content: 'go' }] })
      .result();
    expect(outcome.status).toBe('completed');
    expect(seen[1]?.tools).toBeUndefined();
  });

  it('fails the run with the raw answer when the model gives neither text nor tool calls', async () => {
    const { model } = scripted([answer([])]);
    const outcome = await testRuntime({ planner: modelPlanner({ model }), tools: [upsert] })
      .start({ messages: [{ role: 'user', content: 'go' }] })
      .result();
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toContain('neither text nor tool calls');
  });

  it('retries a 429 honouring Retry-After, then names the provider and status when it keeps failing', async () => {
    const limited = () =>
      new APICallError({
        message: 'Too Many Requests',
        url: 'http://127.0.0.1/v1/chat/completions',
        requestBodyValues: {},
        statusCode: 429,
        responseHeaders: { 'retry-after': '0', 'x-request-id': 'req_7' },
        isRetryable: true,
      });
    let calls = 0;
    const model = new MockLanguageModelV3({
      provider: 'local',
      modelId: 'gemma',
      doGenerate: async () => {
        calls++;
        throw limited();
      },
    });
    const planner = modelPlanner({ model, maxRetries: 2 });
    const error = await planner
      .planStart({
        runId: 'r',
        turnId: 'r:t1',
        agentId: 'a',
        messages: [],
        tools: [],
        caps: {} as never,
        labels: {},
      })
      .catch((err: unknown) => err);
    expect(calls).toBe(3);
    expect(error).toBeInstanceOf(ModelPlannerError);
    expect((error as Error).message).toMatch(
      /local model gemma failed after 3 attempts, HTTP 429, request id req_7/,
    );
  });
  it('stream: calls doStream and puts the text and tool-input deltas on events$, not in the event log', async () => {
    const parts = (turn: number): LanguageModelV3StreamPart[] =>
      turn === 0
        ? [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't0' },
            { type: 'text-delta', id: 't0', delta: 'Adding ' },
            { type: 'text-delta', id: 't0', delta: 'ada.' },
            { type: 'text-end', id: 't0' },
            { type: 'tool-input-start', id: 'call_0', toolName: 'crm__upsert_profile' },
            { type: 'tool-input-delta', id: 'call_0', delta: '{"email":"ada@example.com",' },
            { type: 'tool-input-delta', id: 'call_0', delta: '"plan":"pro"}' },
            { type: 'tool-input-end', id: 'call_0' },
            {
              type: 'tool-call',
              toolCallId: 'call_0',
              toolName: 'crm__upsert_profile',
              input: '{"email":"ada@example.com","plan":"pro"}',
            },
            { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: undefined } },
          ]
        : [
            { type: 'text-start', id: 't1' },
            { type: 'text-delta', id: 't1', delta: 'Ada is ' },
            { type: 'text-delta', id: 't1', delta: 'on pro.' },
            { type: 'text-end', id: 't1' },
            { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } },
          ];
    let turn = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: simulateReadableStream({ chunks: parts(turn++) }) }),
    });
    const runtime = testRuntime({ planner: modelPlanner({ model, stream: true }), tools: [upsert] });
    const run = runtime.start({ runId: 'streamed', messages: [{ role: 'user', content: 'Add ada as pro' }] });
    const events = allEvents(run);
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('Ada is on pro.');
    expect(outcome.toolResults.map((result) => result.result)).toEqual([{ id: 'cus_ada@example.com' }]);
    expect(outcome.usage.totalTokens).toBe(30);
    const deltas = (await events).filter((e) => e.type === 'text_delta' || e.type === 'tool_call_delta');
    expect(deltas.map(({ at: _at, ...rest }) => rest)).toEqual([
      { type: 'text_delta', runId: 'streamed', turnId: 'streamed:t1', delta: 'Adding ' },
      { type: 'text_delta', runId: 'streamed', turnId: 'streamed:t1', delta: 'ada.' },
      {
        type: 'tool_call_delta',
        runId: 'streamed',
        turnId: 'streamed:t1',
        toolCallId: 'call_0',
        tool: 'crm.upsert_profile',
        delta: '{"email":"ada@example.com",',
      },
      {
        type: 'tool_call_delta',
        runId: 'streamed',
        turnId: 'streamed:t1',
        toolCallId: 'call_0',
        tool: 'crm.upsert_profile',
        delta: '"plan":"pro"}',
      },
      { type: 'text_delta', runId: 'streamed', turnId: 'streamed:t2', delta: 'Ada is ' },
      { type: 'text_delta', runId: 'streamed', turnId: 'streamed:t2', delta: 'on pro.' },
    ]);
    // Live only: a subscriber after the fact gets the run's events without its deltas.
    const replayed = await allEvents(run);
    expect(replayed.some((e) => e.type.endsWith('_delta'))).toBe(false);
    expect(replayed.at(-1)?.type).toBe('run_completed');
    await run.persisted();
    const logged = await runtime.store.readEvents('streamed');
    const types = logged.map((record) => (record.event as RunEvent).type);
    expect(types.some((type) => type.endsWith('_delta'))).toBe(false);
    expect(types).toContain('planner_note'); // the text that came with the call is kept
  });

  it('takes a V2 (AI SDK 5) model too: its finish reason and usage are read as ai@6 reads them', async () => {
    const answersV2 = [
      {
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call_0',
            toolName: 'crm__upsert_profile',
            input: '{"email":"ada@example.com","plan":"pro"}',
          },
        ],
        finishReason: 'tool-calls',
      },
      { content: [{ type: 'text', text: 'Ada is on pro.' }], finishReason: 'stop' },
    ];
    const seenV2: unknown[] = [];
    const v2: LanguageModelV2 = {
      specificationVersion: 'v2',
      provider: 'legacy',
      modelId: 'legacy-1',
      supportedUrls: {},
      doGenerate: async (options) => {
        seenV2.push(options);
        const next = answersV2.shift()!;
        return {
          ...next,
          usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
          warnings: [],
        } as Awaited<ReturnType<LanguageModelV2['doGenerate']>>;
      },
      doStream: async () => {
        throw new Error('not used');
      },
    };
    const outcome = await testRuntime({ planner: modelPlanner({ model: v2 }), tools: [upsert] })
      .start({ messages: [{ role: 'user', content: 'Add ada as pro' }] })
      .result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults.map((result) => result.result)).toEqual([{ id: 'cus_ada@example.com' }]);
    expect(outcome.finalResponse?.text).toBe('Ada is on pro.');
    expect(outcome.usage).toEqual({ inputTokens: 20, outputTokens: 10, totalTokens: 30 });
    expect(seenV2).toHaveLength(2);
  });

  it('askUser: a call of ask_user makes the run wait for a person; the answer is the user’s message', async () => {
    const { model, seen } = scripted([
      answer([
        {
          type: 'tool-call',
          toolCallId: 'call_ask',
          toolName: 'ask_user',
          input: '{"question":"Which plan, free or pro?","missingFields":["plan"]}',
        },
        toolCall('{"email":"ada@example.com","plan":"pro"}'),
      ]),
      answer([toolCall('{"email":"ada@example.com","plan":"free"}', 'call_1')]),
      answer([{ type: 'text', text: 'Ada is on free.' }]),
    ]);
    const run = testRuntime({ planner: modelPlanner({ model, askUser: true }), tools: [upsert] }).start({
      messages: [{ role: 'user', content: 'Add ada@example.com' }],
    });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'));
    expect(run.awaiting).toMatchObject({
      kind: 'clarification',
      id: 'call_ask',
      question: 'Which plan, free or pro?',
      missingFields: ['plan'],
    });
    expect(seen[0]?.tools?.map((tool) => tool.name)).toEqual(['crm__upsert_profile', 'ask_user']);
    await run.provideClarification({ id: 'call_ask', answer: 'free' });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('Ada is on free.');
    // The call that came with the question waited: only the one after the answer ran.
    expect(outcome.toolResults.map((result) => result.result)).toEqual([{ id: 'cus_ada@example.com' }]);
    const lastTwo = seen[1]?.prompt.slice(-2);
    expect(lastTwo).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'Which plan, free or pro?' }] },
      { role: 'user', content: [{ type: 'text', text: 'free' }] },
    ]);
  });

  it('askUser: not offered on a finalizing turn, nor without the option', async () => {
    const { model, seen } = scripted([
      answer([toolCall('{"email":"a@b.co","plan":"pro"}')]),
      answer([{ type: 'text', text: 'Done.' }]),
    ]);
    await testRuntime({
      planner: modelPlanner({ model, askUser: true }),
      tools: [upsert],
      caps: { maxToolCalls: 1 },
    })
      .start({ messages: [{ role: 'user', content: 'go' }] })
      .result();
    expect(seen[0]?.tools?.map((tool) => tool.name)).toContain('ask_user');
    expect(seen[1]?.tools).toBeUndefined();
    const plain = scripted([answer([{ type: 'text', text: 'Done.' }])]);
    await testRuntime({ planner: modelPlanner({ model: plain.model }), tools: [upsert] })
      .start({ messages: [{ role: 'user', content: 'go' }] })
      .result();
    expect(plain.seen[0]?.tools?.map((tool) => tool.name)).toEqual(['crm__upsert_profile']);
  });

  it('output: validates the final answer against the schema, and has the model repair a bad one', async () => {
    const Summary = z.object({ email: z.email(), plan: z.enum(['free', 'pro']) });
    const { model, seen } = scripted([
      answer([{ type: 'text', text: 'Ada is on pro.' }]),
      answer([{ type: 'text', text: '{"email":"ada@example.com","plan":"PRO"}' }]),
      answer([{ type: 'text', text: '```json\n{"email":"ada@example.com","plan":"pro"}\n```' }]),
    ]);
    const outcome = await testRuntime({ planner: modelPlanner({ model, output: Summary }), tools: [upsert] })
      .start({ messages: [{ role: 'user', content: 'What is Ada on?' }] })
      .result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.data).toEqual({ email: 'ada@example.com', plan: 'pro' });
    expect(seen).toHaveLength(3);
    expect(seen[0]?.prompt[0]?.content).toMatch(/answer only with JSON matching this JSON Schema/);
    // A repair: no tools, JSON asked for, the answer and what was wrong with it in the prompt.
    expect(seen[1]?.tools).toBeUndefined();
    expect(seen[1]?.responseFormat).toMatchObject({ type: 'json' });
    expect(JSON.stringify(seen[1]?.prompt.at(-1))).toMatch(/not JSON/);
    expect(JSON.stringify(seen[2]?.prompt.at(-1))).toMatch(/plan: Invalid option/);
    expect(outcome.usage.totalTokens).toBe(45); // the repairs' tokens count
  });

  it('output: fails the run with the last answer when repairs run out (caps.maxRetriesPerTool)', async () => {
    const { model, seen } = scripted([
      answer([{ type: 'text', text: 'no' }]),
      answer([{ type: 'text', text: 'still no' }]),
    ]);
    const outcome = await testRuntime({
      planner: modelPlanner({ model, output: z.object({ n: z.number() }) }),
      tools: [upsert],
      caps: { maxRetriesPerTool: 1 },
    })
      .start({ messages: [{ role: 'user', content: 'count' }] })
      .result();
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toMatch(/does not match the output schema after 2 attempts: not JSON/);
    expect(seen).toHaveLength(2);
  });
});

describe('toolNameMap', () => {
  it('maps every id to a provider-safe name and back, without collisions', () => {
    const ids = [
      'crm.upsert_profile',
      'crm__upsert.profile',
      'mcp-a.search',
      'mcp_b.search',
      `x.${'y'.repeat(90)}`,
      `x.${'y'.repeat(91)}`,
    ];
    const map = toolNameMap(ids);
    const names = ids.map((id) => map.toProvider(id));
    for (const name of names) expect(name).toMatch(PROVIDER_TOOL_NAME);
    expect(new Set(names).size).toBe(ids.length);
    for (const id of ids) expect(map.fromProvider(map.toProvider(id))).toBe(id);
    expect(map.toProvider('crm.upsert_profile')).toBe('crm__upsert_profile');
  });
});
