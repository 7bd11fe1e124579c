import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PARENT_TOOL_CALL_LABEL } from '../machines/run-context.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { agentTool } from '../runtime/agent-tool.ts';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import { ToolError } from '../tools/tool-error.ts';

function researchRuntime(steps: Parameters<typeof scriptedPlanner>[0], seen: ToolCallMeta[] = []) {
  const search = defineTool({
    id: 'kb.search',
    description: 'Search the knowledge base',
    input: z.object({ query: z.string() }),
    execute: async ({ query }, { meta }) => {
      seen.push(meta);
      return { hits: [`${query}: 42`] };
    },
  });
  return createRuntime({
    agent: { id: 'researcher' },
    planner: scriptedPlanner(steps),
    tools: [search],
    telemetry: false,
  });
}

/** The research agent as a tool of the parent agent. */
function researchTool(child: Runtime) {
  return agentTool({
    id: 'agents.research',
    description: 'Ask the research agent',
    input: z.object({ question: z.string() }),
    runtime: child,
    messages: ({ question }) => [{ role: 'user', content: question }],
  });
}

describe('agentTool: another agent as a tool (docs/tool-boundary.md)', () => {
  it('runs the child agent, links it to the call, and returns its final response', async () => {
    const seen: ToolCallMeta[] = [];
    const child = researchRuntime(
      [
        { toolCalls: [{ name: 'kb.search', input: { query: 'answer' } }] },
        { finalResponse: { text: 'It is 42.' } },
      ],
      seen,
    );
    const research = researchTool(child);
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'agents.research', toolCallId: 'ask-1', input: { question: 'What is the answer?' } },
        ],
      },
      (input) => ({
        finalResponse: { text: JSON.stringify((input as PlanResumeInput).toolResults[0]?.result) },
      }),
    ]);
    const parent = createRuntime({ agent: { id: 'support' }, planner, tools: [research], telemetry: false });

    const outcome = await parent
      .start({ runId: 'parent-1', sessionId: 's1', messages: [{ role: 'user', content: 'ask' }] })
      .result();

    expect(outcome.status).toBe('completed');
    const [result] = outcome.toolResults;
    expect(result?.result).toEqual({ text: 'It is 42.' });
    expect(result?.artifacts).toEqual([
      {
        kind: 'child_run',
        title: 'agents.research run parent-1:t1:c1:child',
        data: { runId: 'parent-1:t1:c1:child', status: 'completed', toolCalls: 1 },
      },
    ]);
    // The child's tool calls know their parent call; the child shares the session.
    expect(seen[0]).toMatchObject({
      runId: 'parent-1:t1:c1:child',
      parentToolCallId: 'parent-1:t1:c1',
      sessionId: 's1',
    });
    const stored = await child.store.load('parent-1:t1:c1:child');
    expect(stored?.labels?.[PARENT_TOOL_CALL_LABEL]).toBe('parent-1:t1:c1');
    // Artifacts never reach the model: the transcript holds the result only.
    expect(JSON.stringify(outcome.transcript)).not.toContain('child_run');
  });

  it('fails the call with the child error as its cause when the child run fails', async () => {
    const child = researchRuntime([{ finalResponse: undefined } as never]);
    const research = researchTool(child);
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'agents.research', toolCallId: 'ask-2', input: { question: '?' } }] },
      { finalResponse: { text: 'gave up' } },
    ]);
    const parent = createRuntime({ agent: { id: 'support' }, planner, tools: [research], telemetry: false });

    await parent.start({ runId: 'parent-2', messages: [{ role: 'user', content: 'ask' }] }).result();

    const resumed = planner.calls[1] as PlanResumeInput;
    const error = resumed.toolResults[0]?.error;
    expect(error).toBeInstanceOf(ToolError);
    expect(error?.message).toBe('Child run parent-2:t1:c1:child of agents.research failed');
    expect(error?.cause?.message).toContain('Planner');
    expect(error?.toJSON().cause).toBeDefined();
  });

  it('cancels the child run when the parent run is canceled', async () => {
    const child = researchRuntime([() => new Promise(() => {})]);
    const research = researchTool(child);
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'agents.research', toolCallId: 'ask-3', input: { question: '?' } }] },
    ]);
    const parent = createRuntime({ agent: { id: 'support' }, planner, tools: [research], telemetry: false });
    const run = parent.start({ runId: 'parent-3', messages: [{ role: 'user', content: 'ask' }] });
    // Until the child run has started (a fixed 50 ms was not always enough on a loaded machine).
    await vi.waitFor(() => expect(child.get('parent-3:t1:c1:child')?.status).toBe('running'));
    const childRun = child.get('parent-3:t1:c1:child');

    run.cancel('user left');

    expect((await run.result()).status).toBe('canceled');
    expect((await childRun!.result()).status).toBe('canceled');
  });
});
