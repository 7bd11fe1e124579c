/**
 * The child process that measures one variant (docs/benchmarks.md §Side by side), started by
 * variant-process.ts as `node --import ../as-built.mjs variant-worker.ts <variant> <dir>` with an IPC
 * channel. It loads the variant, says `ready`, then runs one block per `block` message (the loop
 * for a run length is made at its first block) and answers with its samples; it exits on `close`
 * or when the parent goes.
 *
 * | parent → worker | worker → parent |
 * |---|---|
 * | (start) | `{ type: 'ready' }` or `{ type: 'error', message }` |
 * | `{ type: 'block', steps, limits }` | `{ type: 'samples', samples }` or `{ type: 'error', message }` |
 * | `{ type: 'close' }` | (exits 0) |
 *
 * @module
 */
import { type BlockLimits, type BlockSamples, type Loop, runBlock } from './cpu-block.ts';
import { makeVariantLoop } from './variants.ts';

export type ToWorker = { type: 'block'; steps: number; limits: BlockLimits } | { type: 'close' };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'samples'; samples: BlockSamples }
  | { type: 'error'; message: string };

const tell = (message: FromWorker, then?: () => void) => process.send?.(message, undefined, undefined, then);
const failed = (error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.exitCode = 1;
  tell({ type: 'error', message }, () => process.disconnect?.());
};

if (!process.send)
  throw new Error('variant-worker.ts runs as a child with an IPC channel (variant-process.ts)');
const [variant = '', dir = ''] = process.argv.slice(2);
const loops = new Map<number, Loop>();
const loopFor = async (steps: number) => {
  if (!loops.has(steps)) loops.set(steps, await makeVariantLoop(variant, steps, dir));
  return loops.get(steps)!;
};
try {
  // Loaded now, so that a variant that does not exist fails the start.
  await loopFor(1);
  process.on('message', (message: ToWorker) => {
    if (message.type === 'close') {
      process.disconnect?.();
      return;
    }
    loopFor(message.steps)
      .then((loop) => runBlock(loop, message.steps, message.limits))
      .then((samples) => tell({ type: 'samples', samples }), failed);
  });
  process.on('disconnect', () => process.exit());
  tell({ type: 'ready' });
} catch (error) {
  failed(error);
}
