import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolError } from '../tools/tool-error.ts';

/**
 * The test plan APP-SVC-001.8.9 (docs/sources.md §Test plan) as a test: a tool call
 * whose arguments fail the tool's zod schema is recorded as a recoverable ToolError, the tool is
 * not executed, the planner is called again with the error in its history, and the run completes.
 */
describe('seed test plan APP-SVC-001.8.9: tool argument validation failure', () => {
  it('records a recoverable ToolError, never executes the tool, calls the planner again and completes', async () => {
    const execute = vi.fn(async () => ({ output: 'should not be called' }));
    const validationTestTool = defineTool({
      id: 'test.validationTestTool',
      description: 'A mock tool with specific argument validation.',
      input: z.object({ requiredParam: z.string().min(3) }),
      execute,
    });
    const planner = scriptedPlanner([
      {
        toolCalls: [
          {
            name: 'test.validationTestTool',
            toolCallId: 'toolCallValFail1',
            input: '{"requiredParam": "a"}',
          },
        ],
      },
      { finalResponse: { text: 'Goal achieved after LLM corrected tool arguments.' } },
    ]);
    const runtime = createRuntime({ agent: { id: 'seed-agent' }, planner, tools: [validationTestTool] });

    const run = runtime.start({ messages: [{ role: 'user', content: 'Run the validation test tool' }] });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toContain('Goal achieved after LLM corrected tool arguments.');
    expect(execute).not.toHaveBeenCalled();
    expect(planner.calls).toHaveLength(2);

    const second = planner.calls[1]!;
    if (!('toolResults' in second)) throw new Error('the second planner call must be a resume');
    const [toolResult] = second.toolResults;
    expect(toolResult?.providerToolCallId).toBe('toolCallValFail1');
    expect(toolResult?.toolCallId).toBe(`${toolResult?.toolCallId.split(':t1:')[0]}:t1:c1`);
    expect(toolResult?.executed).toBe(false);
    expect(toolResult?.error).toBeInstanceOf(ToolError);
    expect(toolResult?.error?.message).toContain('Argument validation failed');
    expect(toolResult?.error?.recoverable).toBe(true);
    expect(toolResult?.retryHint).toMatchObject({
      reason: 'invalid_arguments',
      priorInput: { requiredParam: 'a' },
      restrictToTool: true,
    });

    expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(outcome.transcript.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    const [, assistantCall, toolMessage, final] = outcome.transcript;
    expect(assistantCall).toMatchObject({
      role: 'assistant',
      toolCalls: [{ providerToolCallId: 'toolCallValFail1', toolName: 'test.validationTestTool' }],
    });
    expect(toolMessage).toMatchObject({
      role: 'tool',
      providerToolCallId: 'toolCallValFail1',
      toolName: 'test.validationTestTool',
      content: { error: { recoverable: true }, retryHint: { reason: 'invalid_arguments' } },
    });
    expect(JSON.stringify((toolMessage as { content: unknown }).content)).toContain(
      'Argument validation failed',
    );
    expect(final).toEqual({
      role: 'assistant',
      content: 'Goal achieved after LLM corrected tool arguments.',
    });
    expect(outcome.error).toBeUndefined();
  });
});
