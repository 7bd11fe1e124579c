/**
 * A server's `elicitation/create` during a tool call as the run's own await (issue 39 item 4,
 * docs/mcp.md §Elicitation), with `onElicitation: elicitationFromRun()`: against the published
 * `@modelcontextprotocol/server-everything` (its `trigger-elicitation-request` tool, over stdio)
 * and a server of our own over streamable HTTP whose tool records what it was answered.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { elicitationFromRun, type McpToolset, mcpToolset } from '../mcp/index.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { callTool } from '../tools/call-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { startTestMcpServer } from './support/mcp-test-server.ts';

const EVERYTHING = join(process.cwd(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((closable) => closable.close()));
});

async function toolset(options: Parameters<typeof mcpToolset>[0]): Promise<McpToolset> {
  const made = await mcpToolset({ onWarning: () => {}, ...options });
  open.push(made);
  return made;
}

/** A run of one call to `tool`, then a final answer. */
function runOne(tools: McpToolset, tool: string, input: unknown = {}): { runtime: Runtime; run: RunHandle } {
  const runtime = createRuntime({
    agent: { id: 'elicit' },
    tools: tools.tools,
    planner: scriptedPlanner([{ toolCalls: [{ name: tool, input }] }, { finalResponse: { text: 'done' } }]),
    telemetry: false,
  });
  open.push(runtime);
  return { runtime, run: runtime.start({ messages: [{ role: 'user', content: 'go' }] }) };
}

/** Resolves when the run awaits (status `awaiting`), with what it awaits. */
async function awaited(run: RunHandle, previousId?: string) {
  for (let i = 0; i < 500; i++) {
    const awaiting = run.awaiting as { id?: string } | null;
    if (run.status === 'awaiting' && awaiting?.id !== undefined && awaiting.id !== previousId)
      return run.awaiting!;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the run did not await (state ${run.state})`);
}

describe('elicitation as the run’s await: server-everything’s trigger-elicitation-request (stdio)', () => {
  it('parks the run in awaiting.elicitation as a clarification, asks again after an unusable answer, and the call finishes with the answer', async () => {
    const everything = await toolset({
      name: 'everything',
      transport: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      onElicitation: elicitationFromRun(),
    });
    const { run } = runOne(everything, 'everything.trigger-elicitation-request');

    const first = await awaited(run);
    expect(run.state).toBe('awaiting.elicitation');
    expect(first).toMatchObject({
      kind: 'clarification',
      question: expect.stringContaining('Please provide inputs for the following fields:'),
      missingFields: expect.arrayContaining(['name', 'check', 'integer', 'untitledSingleSelectEnum']),
      restrictToTool: 'everything.trigger-elicitation-request',
      elicitation: { toolCallId: `${run.runId}:t1:c1`, tool: 'everything.trigger-elicitation-request' },
    });
    expect((first as { question: string }).question).toContain(
      '- name (string, required): Your full, legal name',
    );
    // A JSON answer with a wrong-typed field is put again, with the problem, and loses nothing.
    await run.provideClarification({
      id: (first as { id: string }).id,
      answer: '{"name": "Ada", "integer": "many"}',
    });
    const second = await awaited(run, (first as { id: string }).id);
    expect((second as { question: string }).question).toMatch(
      /^That answer could not be used: integer: answer a number/,
    );

    await run.provideClarification({
      id: (second as { id: string }).id,
      answer: '{"name": "Ada Lovelace", "check": true, "integer": 7, "untitledSingleSelectEnum": "Joey"}',
    });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    const text = JSON.stringify(outcome.toolResults[0]?.result);
    expect(text).toContain('User provided the requested information');
    expect(text).toContain('Name: Ada Lovelace');
    expect(text).toContain('Favorite Integer: 7');
  }, 60_000);

  it('a plain-text answer fills the one required field', async () => {
    const everything = await toolset({
      name: 'everything',
      transport: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      onElicitation: elicitationFromRun(),
    });
    const { run } = runOne(everything, 'everything.trigger-elicitation-request');
    const question = (await awaited(run)) as { id: string };
    await run.provideClarification({ id: question.id, answer: 'Grace Hopper' });
    const outcome = await run.result();
    expect(JSON.stringify(outcome.toolResults[0]?.result)).toContain('Name: Grace Hopper');
  }, 60_000);
});

describe('elicitation as the run’s await: what the server is answered (a server of our own, HTTP)', () => {
  /** A server whose `book` tool asks a yes/no question (no fields) and returns, and records, the answer. */
  async function askingServer() {
    const answers: unknown[] = [];
    const server = await startTestMcpServer([
      {
        name: 'book',
        annotations: { readOnlyHint: false, idempotentHint: false },
        call: async (_args, extra) => {
          const result = await extra.elicit({
            message: 'Book the table for 4?',
            requestedSchema: { type: 'object', properties: {} },
          });
          answers.push(result);
          return { content: [{ type: 'text', text: `answered ${result.action}` }] };
        },
      },
    ]);
    open.push(server);
    return { server, answers };
  }

  it('a question without fields is the run’s confirmation: approved is `accept`, denied `decline`', async () => {
    const { server, answers } = await askingServer();
    const tools = await toolset({
      name: 'shop',
      transport: { url: server.url },
      onElicitation: elicitationFromRun(),
    });

    const approved = runOne(tools, 'shop.book').run;
    const question = (await awaited(approved)) as { id: string; kind: string; question: string };
    expect(question).toMatchObject({ kind: 'confirmation', question: 'Book the table for 4?' });
    await approved.confirm({ id: question.id, approved: true });
    expect((await approved.result()).toolResults[0]?.result).toBe('answered accept');

    const denied = runOne(tools, 'shop.book').run;
    await denied.confirm({
      id: ((await awaited(denied)) as { id: string }).id,
      approved: false,
      reason: 'no',
    });
    expect((await denied.result()).toolResults[0]?.result).toBe('answered decline');
    expect(answers).toEqual([{ action: 'accept', content: {} }, { action: 'decline' }]);
  }, 60_000);

  it('canceling the waiting run declines; nobody answering before the call’s timeout answers `cancel`', async () => {
    const { server, answers } = await askingServer();
    const tools = await toolset({
      name: 'shop',
      transport: { url: server.url },
      onElicitation: elicitationFromRun(),
    });
    const canceled = runOne(tools, 'shop.book').run;
    await awaited(canceled);
    canceled.cancel('the guest left');
    expect((await canceled.result()).status).toBe('canceled');
    await expect.poll(() => answers).toEqual([{ action: 'decline' }]);

    const slow = await toolset({
      name: 'slow',
      transport: { url: server.url },
      timeoutMs: 400,
      onElicitation: elicitationFromRun(),
    });
    const unanswered = runOne(slow, 'slow.book').run;
    await awaited(unanswered);
    const outcome = await unanswered.result();
    expect(outcome.toolResults[0]?.retryHint?.reason).toBe('timeout');
    expect(unanswered.awaiting).toBeNull();
    await expect.poll(() => answers).toEqual([{ action: 'decline' }, { action: 'cancel' }]);
  }, 60_000);

  it('outside a run nobody can be asked: the fallback answers (else `cancel`)', async () => {
    const { server, answers } = await askingServer();
    const tools = await toolset({
      name: 'shop',
      transport: { url: server.url },
      onElicitation: elicitationFromRun({ fallback: async () => ({ action: 'decline' }) }),
    });
    const meta = { runId: 'solo', turnId: 'solo:t1', toolCallId: 'solo:t1:c1', agentId: 'a', attempt: 1 };
    const result = await callTool(
      new ToolCatalog(tools.tools),
      { name: 'shop.book', toolCallId: meta.toolCallId, input: {} },
      { meta },
    );
    expect(result.result).toBe('answered decline');
    expect(answers).toEqual([{ action: 'decline' }]);
  }, 60_000);
});
