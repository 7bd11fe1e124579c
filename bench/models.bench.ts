/**
 * What `modelPlanner` adds to a model call (issue 11): one planner turn (the transcript and tools
 * mapped to the provider's prompt, the answer mapped back to a PlanResult, the `chat` span) vs
 * calling the model's `doGenerate` directly with a prompt built once, on the AI SDK's own
 * `MockLanguageModelV3` answering at once, interleaved in rounds. Target: ≤ 50 µs beyond the
 * model call.
 *
 *     node --import tsx bench/models.bench.ts [--turns 2000] [--rounds 7] [--messages 20]
 *
 * @module
 */

import { parseArgs } from 'node:util';
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { modelPlanner } from '../models/model-planner.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { PlanResumeInput } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
    messages: { type: 'string', default: '20' },
  },
});
const turns = Number(values.turns);
const rounds = Number(values.rounds);

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Creates or updates a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']), note: z.string().optional() }),
  execute: async () => ({ ok: true }),
});
const answer: LanguageModelV3GenerateResult = {
  content: [
    {
      type: 'tool-call',
      toolCallId: 'call_0',
      toolName: 'crm__upsert_profile',
      input: '{"email":"ada@example.com","plan":"pro"}',
    },
  ],
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage: {
    inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 20, text: 20, reasoning: undefined },
  },
  warnings: [],
};
const model = new MockLanguageModelV3({ doGenerate: async () => answer });

// A transcript of `messages` turns: user, assistant tool calls, tool results.
const messages: Message[] = [{ role: 'user', content: 'Put ada on pro' }];
for (let i = 0; messages.length < Number(values.messages); i++) {
  messages.push({
    role: 'assistant',
    toolCalls: [
      {
        toolCallId: `r:t${i}:c1`,
        toolName: 'crm.upsert_profile',
        input: { email: 'ada@example.com', plan: 'pro' },
      },
    ],
  });
  messages.push({
    role: 'tool',
    toolCallId: `r:t${i}:c1`,
    toolName: 'crm.upsert_profile',
    content: { ok: true },
  });
}
const tools = new ToolCatalog([upsert]).descriptors();
const input: PlanResumeInput = {
  runId: 'r',
  turnId: 'r:t9',
  agentId: 'bench',
  messages,
  tools,
  caps: {
    ...DEFAULT_CAPS,
    toolCalls: 1,
    remainingToolCalls: 49,
    consecutiveFailedToolCalls: 0,
    deadlineAt: Date.now() + 60_000,
  },
  labels: {},
  toolResults: [],
};
const planner = modelPlanner({ model, temperature: 0 });
const direct: LanguageModelV3CallOptions = {
  prompt: [{ role: 'user', content: [{ type: 'text', text: 'Put ada on pro' }] }],
  tools: [
    {
      type: 'function',
      name: 'crm__upsert_profile',
      description: upsert.description,
      inputSchema: upsert.inputSchema as never,
    },
  ],
  toolChoice: { type: 'auto' },
};

const variants: Record<string, () => Promise<unknown>> = {
  'doGenerate directly': async () => model.doGenerate(direct),
  'modelPlanner turn': () => planner.planResume(input),
};
const samples: Record<string, number[]> = { 'doGenerate directly': [], 'modelPlanner turn': [] };
for (let i = 0; i < 500; i++) for (const run of Object.values(variants)) await run();
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
  for (const name of order) {
    const started = performance.now();
    for (let i = 0; i < turns; i++) await variants[name]!();
    samples[name]!.push(((performance.now() - started) * 1000) / turns);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(samples['doGenerate directly']!);
const turn = median(samples['modelPlanner turn']!);
console.log(
  `modelPlanner vs doGenerate (MockLanguageModelV3), ${messages.length}-message transcript, ${turns} turns × ${rounds} rounds, median µs per turn`,
);
console.log(`doGenerate directly   ${base.toFixed(1).padStart(8)} µs`);
console.log(
  `modelPlanner turn     ${turn.toFixed(1).padStart(8)} µs   (+${(turn - base).toFixed(1)} µs; target ≤ 50)`,
);
