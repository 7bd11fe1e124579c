import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ExecuteToolInput } from '../../machines/run-ports.ts';
import { abortableTool } from '../../test/support/abortable-tool.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { ToolCatalog } from '../../tools/tool-catalog.ts';
import { createExecuteToolPort } from './execute-tool.ts';
import type { RunDeps } from './run-deps.ts';

// The port as Temporal's activities call it: a task with a controller and no `onStop`.

const meta = { runId: 'r', turnId: 'r:t1', toolCallId: 'r:t1:c1', agentId: 'a', attempt: 1 };
const request = (name: string): ExecuteToolInput => ({
  call: { toolCallId: meta.toolCallId, name, input: {}, attempt: 1, status: 'admitted', preparedInput: {} },
  meta,
  labels: {},
  index: 0,
});

function portWith(tool: ReturnType<typeof defineTool>) {
  const deps = { catalog: new ToolCatalog([tool]), plugins: [], finalizeGraceMs: 0 } as unknown as RunDeps;
  return createExecuteToolPort(deps, (runId) => ({
    runId,
    agent: { id: 'a', name: 'a' },
    labels: {},
    traceContext: null,
  }));
}

describe('the executeTool port without onStop (Temporal activities)', () => {
  it("aborts the tool's signal when the task's controller aborts", async () => {
    const { tool: waits, seen } = abortableTool();
    const controller = new AbortController();
    const pending = portWith(waits)({ input: request('util.wait'), controller });
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('activity canceled'));
    const output = await pending;
    expect(seen.signal).toBe(controller.signal);
    expect(output.result).toMatchObject({ executed: true, error: { message: 'activity canceled' } });
  });

  it('runs nothing when the controller aborted before the call', async () => {
    let ran = false;
    const tool = defineTool({
      id: 'util.mark',
      description: 'Marks',
      input: z.object({}),
      execute: () => {
        ran = true;
        return 'ran';
      },
    });
    const controller = new AbortController();
    controller.abort(new Error('canceled first'));
    const output = await portWith(tool)({ input: request('util.mark'), controller });
    expect(ran).toBe(false);
    expect(output.result).toMatchObject({ executed: false, error: { message: 'canceled first' } });
  });
});
