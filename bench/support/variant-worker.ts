/**
 * The child process that measures one variant at one run length (docs/benchmarks.md §Side by
 * side), started by variant-process.ts as `node --import tsx variant-worker.ts <variant> <steps>
 * <dir>` with an IPC channel. It makes the loop, says `ready`, then runs one block per `block`
 * message and answers with its samples; it exits on `close` or when the parent goes.
 *
 * | parent → worker | worker → parent |
 * |---|---|
 * | (start) | `{ type: 'ready' }` or `{ type: 'error', message }` |
 * | `{ type: 'block', limits }` | `{ type: 'samples', samples }` or `{ type: 'error', message }` |
 * | `{ type: 'close' }` | (exits 0) |
 *
 * @module
 */
import { type BlockLimits, type BlockSamples, runBlock } from './cpu-block.ts';
import { makeVariantLoop } from './variants.ts';

export type ToWorker = { type: 'block'; limits: BlockLimits } | { type: 'close' };
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
const [variant = '', stepsArg = '', dir = ''] = process.argv.slice(2);
const steps = Number(stepsArg);
try {
  const loop = await makeVariantLoop(variant, steps, dir);
  process.on('message', (message: ToWorker) => {
    if (message.type === 'close') {
      process.disconnect?.();
      return;
    }
    runBlock(loop, steps, message.limits).then((samples) => tell({ type: 'samples', samples }), failed);
  });
  process.on('disconnect', () => process.exit());
  tell({ type: 'ready' });
} catch (error) {
  failed(error);
}
