/**
 * The reference loop of `bench/support/reference-loop.ts` written for each peer framework, as its
 * own documentation would have an app write it: `steps` model turns of one zod-validated `add`
 * tool call each, then a final answer `done`. The model is scripted (no network, no tokens), so
 * what is measured is the framework's own cost per step: its loop, its validation, its
 * transcript, its tool execution.
 *
 * | peer | model | loop |
 * |---|---|---|
 * | AI SDK 6 | `MockLanguageModelV3` (`ai/test`) | `generateText` with `stopWhen: stepCountIs(steps + 1)` |
 * | OpenAI Agents JS 0.20 | a `Model` whose `getResponse` answers from a counter | `Runner.run` with `maxTurns` |
 * | LangGraph.js 1 | a graph node answering `AIMessage`s with `tool_calls` | `StateGraph(MessagesAnnotation)` + `ToolNode`, with and without `MemorySaver`, with `PostgresSaver` (@langchain/langgraph-checkpoint-postgres 1.0.5, own schema; only when the database of `TOOLWARDEN_PG_URL` or scripts/postgres.sh answers), and with `SqliteSaver` (@langchain/langgraph-checkpoint-sqlite 1.0.4 on better-sqlite3 12, a file of its own) |
 *
 * Lives in `bench/peers/` with its own package.json: the peers are development dependencies of
 * this bench only (`bash scripts/bench-peers.sh`: npm ci, and better-sqlite3's addon built for this
 * Node), never of toolwarden.
 *
 * @module
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { AIMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import {
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import {
  Agent,
  tool as agentsTool,
  type Model,
  type ModelResponse,
  Runner,
  setTracingDisabled,
  Usage,
} from '@openai/agents-core';
import { tool as aiTool, generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

/** One run of the loop; resolves when the peer has produced the final answer. */
export type Loop = () => Promise<void>;

const addInput = z.object({ a: z.number(), b: z.number() });
const add = async ({ a, b }: { a: number; b: number }) => ({ sum: a + b });

const usageV3 = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** AI SDK 6: `generateText` over a scripted `MockLanguageModelV3`, one model per run. */
export function aiSdkLoop(steps: number): Loop {
  const addTool = aiTool({ description: 'Adds two numbers', inputSchema: addInput, execute: add });
  return async () => {
    let turn = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        turn++;
        if (turn <= steps) {
          return {
            content: [
              {
                type: 'tool-call',
                toolCallId: `call-${turn}`,
                toolName: 'add',
                input: JSON.stringify({ a: turn, b: 1 }),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage: usageV3,
            warnings: [],
          };
        }
        return {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: usageV3,
          warnings: [],
        };
      },
    });
    const result = await generateText({
      model,
      tools: { add: addTool },
      stopWhen: stepCountIs(steps + 1),
      prompt: 'Add the numbers',
    });
    if (result.text !== 'done') throw new Error(`AI SDK loop ended with ${JSON.stringify(result.text)}`);
  };
}

/** OpenAI Agents JS: an `Agent` with a `tool()` and a scripted `Model`; tracing off. */
export function openAiAgentsLoop(steps: number): Loop {
  setTracingDisabled(true);
  const addTool = agentsTool({
    name: 'add',
    description: 'Adds two numbers',
    parameters: addInput,
    execute: add,
  });
  return async () => {
    let turn = 0;
    const model: Model = {
      async getResponse(): Promise<ModelResponse> {
        turn++;
        const output: ModelResponse['output'] =
          turn <= steps
            ? [
                {
                  type: 'function_call',
                  callId: `call-${turn}`,
                  name: 'add',
                  status: 'completed',
                  arguments: JSON.stringify({ a: turn, b: 1 }),
                },
              ]
            : [
                {
                  type: 'message',
                  role: 'assistant',
                  status: 'completed',
                  content: [{ type: 'output_text', text: 'done' }],
                },
              ];
        return { usage: new Usage(), output };
      },
      // biome-ignore lint/correctness/useYield: the bench never streams
      async *getStreamedResponse() {
        throw new Error('the bench does not stream');
      },
    };
    const agent = new Agent({ name: 'bench', instructions: 'Add the numbers', model, tools: [addTool] });
    const runner = new Runner({ tracingDisabled: true });
    const result = await runner.run(agent, 'Add the numbers', { maxTurns: steps + 2 });
    if (result.finalOutput !== 'done')
      throw new Error(`OpenAI Agents loop ended with ${JSON.stringify(result.finalOutput)}`);
  };
}

/**
 * LangGraph.js: the ReAct graph of its docs (an agent node, a `ToolNode`, a conditional edge),
 * the agent node scripted. With `checkpointer`, every super-step is checkpointed into a
 * `MemorySaver` under the run's own thread.
 */
export function langGraphLoop(steps: number, checkpointer: boolean | 'postgres' | 'sqlite' = false): Loop {
  const addTool = langchainTool(async (input) => JSON.stringify(await add(input)), {
    name: 'add',
    description: 'Adds two numbers',
    schema: addInput,
  });
  let turn = 0;
  const agent = async () => {
    turn++;
    return {
      messages: [
        turn <= steps
          ? new AIMessage({
              content: '',
              tool_calls: [{ id: `call-${turn}`, name: 'add', args: { a: turn, b: 1 } }],
            })
          : new AIMessage('done'),
      ],
    };
  };
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode([addTool]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1) as AIMessage | undefined;
      return last?.tool_calls?.length ? 'tools' : END;
    })
    .addEdge('tools', 'agent');
  let saver: Promise<BaseCheckpointSaver> | undefined;
  let compiled: ReturnType<typeof graph.compile> | undefined;
  let thread = 0;
  return async () => {
    if (compiled === undefined) {
      if (checkpointer === 'postgres' || checkpointer === 'sqlite') {
        saver ??= checkpointer === 'postgres' ? postgresSaver() : Promise.resolve(sqliteSaver(steps));
        compiled = graph.compile({ checkpointer: await saver });
      } else compiled = graph.compile(checkpointer ? { checkpointer: new MemorySaver() } : {});
    }
    turn = 0;
    const state = await compiled.invoke(
      { messages: [{ role: 'user', content: 'Add the numbers' }] },
      { recursionLimit: 2 * steps + 5, configurable: { thread_id: `bench-${++thread}` } },
    );
    const last = state.messages.at(-1);
    if (last?.content !== 'done')
      throw new Error(`LangGraph loop ended with ${JSON.stringify(last?.content)}`);
  };
}

/** The PostgreSQL the side-by-side's PostgreSQL variants use (scripts/postgres.sh url). */
export const PEER_POSTGRES_URL =
  process.env.TOOLWARDEN_PG_URL || 'postgres://postgres@127.0.0.1:54329/toolwarden_test';

/** A `PostgresSaver` in a schema of this process's own, set up (its tables created). */
async function postgresSaver(): Promise<BaseCheckpointSaver> {
  const saver = PostgresSaver.fromConnString(PEER_POSTGRES_URL, { schema: `lg_bench_${process.pid}` });
  await saver.setup();
  return saver;
}

/**
 * A `SqliteSaver` on a database file of this process's own in the system's temporary folder
 * (SqliteSaver sets WAL mode itself, as toolwarden's SQLite store does).
 */
function sqliteSaver(steps: number): BaseCheckpointSaver {
  return SqliteSaver.fromConnString(join(tmpdir(), `lg-bench-${process.pid}-${steps}.db`));
}

/** Every peer loop by the name the side-by-side prints. */
export const peerLoops = {
  'AI SDK 6 generateText': aiSdkLoop,
  'OpenAI Agents JS 0.20': openAiAgentsLoop,
  'LangGraph.js 1 (no checkpointer)': (steps: number) => langGraphLoop(steps, false),
  'LangGraph.js 1 (MemorySaver)': (steps: number) => langGraphLoop(steps, true),
  'LangGraph.js 1 (PostgresSaver)': (steps: number) => langGraphLoop(steps, 'postgres'),
  'LangGraph.js 1 (SqliteSaver)': (steps: number) => langGraphLoop(steps, 'sqlite'),
} satisfies Record<string, (steps: number) => Loop>;
