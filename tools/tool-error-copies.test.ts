import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callTool } from './call-tool.ts';
import { defineTool } from './define-tool.ts';
import { ToolCatalog } from './tool-catalog.ts';
import { ToolError } from './tool-error.ts';

/**
 * Two copies of the module (issue 25 item 7): `toolwarden mcp serve` in a source checkout runs the
 * TypeScript sources while a config importing `'toolwarden'` gets the built ones, so a tool throws
 * the other copy's ToolError. The boundary must read it as a ToolError all the same.
 */

// A second instance of tool-error.ts, as a config importing another copy of toolwarden has.
const other = (await import(`./tool-error.ts?copy=${'other'}`)) as typeof import('./tool-error.ts');

function run(execute: () => unknown) {
  const tool = defineTool({ id: 'cfg.tool', description: 'd', input: z.object({}), execute });
  const meta = { runId: 'r', turnId: 'r:t1', toolCallId: 'r:t1:c1', agentId: 'a', attempt: 1 };
  return callTool(new ToolCatalog([tool]), { name: 'cfg.tool', toolCallId: 'r:t1:c1', input: {} }, {
    meta,
  } as never);
}

describe('ToolError across copies of the module', () => {
  it('is a different class, recognised by its brand', () => {
    const foreign = new other.ToolError('from the config', { recoverable: true });
    expect(other.ToolError).not.toBe(ToolError);
    expect(foreign instanceof ToolError).toBe(false);
    expect(ToolError.is(foreign)).toBe(true);
    expect(ToolError.is(new Error('plain'))).toBe(false);
    expect(ToolError.is({ name: 'ToolError', message: 'shape only', recoverable: true })).toBe(false);
    expect(ToolError.from(foreign)).toBe(foreign);
  });

  it('a recoverable ToolError thrown by a tool from another copy stays recoverable', async () => {
    const result = await run(() => {
      throw new other.ToolError('quota for this folder reached', { recoverable: true });
    });
    expect(result.error?.recoverable).toBe(true);
    expect(result.error?.message).toBe('quota for this folder reached');
  });

  it('the typed errors of another copy keep their hints', async () => {
    const unavailable = await run(() => {
      throw new other.ToolUnavailableError('backend down');
    });
    expect(unavailable.retryHint?.reason).toBe('tool_unavailable');
    const rejected = await run(() => {
      throw new other.ToolArgumentsRejectedError('no such file');
    });
    expect(rejected.retryHint?.reason).toBe('invalid_arguments');
    const limited = await run(() => {
      throw new other.RateLimitedError('slow down', { retryAfterMs: 250 });
    });
    expect(limited.retryHint).toMatchObject({ reason: 'rate_limited', retryAfterMs: 250 });
  });
});
