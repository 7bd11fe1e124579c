import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callTool } from './call-tool.ts';
import { defineTool } from './define-tool.ts';
import { ToolCatalog } from './tool-catalog.ts';
import { ToolError } from './tool-error.ts';
import { ToolResultJSONSchema, toolResultFromJSON, toolResultToJSON } from './tool-result.ts';

const meta = { runId: 'run-1', turnId: 'turn-1', toolCallId: 'call-1', agentId: 'support', attempt: 1 };

const crashing = defineTool({
  id: 'crm.write',
  description: '',
  input: z.object({ plan: z.enum(['free', 'pro']) }),
  execute: () => {
    throw new Error('db write failed', { cause: new Error('connection reset') });
  },
});

describe('toolResultToJSON / toolResultFromJSON', () => {
  it('a failed call survives JSON: the error comes back as a ToolError with its cause', async () => {
    const result = await callTool(
      new ToolCatalog([crashing]),
      { name: 'crm.write', toolCallId: 'c-1', input: { plan: 'pro' } },
      { meta },
    );
    const json = JSON.parse(JSON.stringify(toolResultToJSON(result)));
    expect(ToolResultJSONSchema.safeParse(json).success).toBe(true);

    const back = toolResultFromJSON(ToolResultJSONSchema.parse(json));
    expect(back.error).toBeInstanceOf(ToolError);
    expect(back.error?.cause?.message).toBe('connection reset');
    expect(back.executed).toBe(true);
  });

  it('a validation failure keeps its hint through JSON', async () => {
    const result = await callTool(
      new ToolCatalog([crashing]),
      { name: 'crm.write', toolCallId: 'c-2', input: { plan: 'gold' } },
      { meta },
    );
    const json = JSON.parse(JSON.stringify(toolResultToJSON(result)));
    const back = toolResultFromJSON(ToolResultJSONSchema.parse(json));
    expect(back.retryHint).toMatchObject({ reason: 'invalid_arguments', priorInput: { plan: 'gold' } });
    expect(back.error?.recoverable).toBe(true);
  });
});
