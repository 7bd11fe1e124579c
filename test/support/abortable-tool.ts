import { z } from 'zod';
import { defineTool } from '../../tools/define-tool.ts';

/**
 * A tool that runs until its `ctx.signal` aborts, then fails with the abort's reason; `seen`
 * holds the signal it was given once it started.
 */
export function abortableTool(id = 'util.wait') {
  const seen: { signal?: AbortSignal } = {};
  const tool = defineTool({
    id,
    description: 'Runs until aborted',
    input: z.object({}),
    execute: (_, ctx) =>
      new Promise((_resolve, reject) => {
        seen.signal = ctx.signal;
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
      }),
  });
  return { tool, seen };
}
