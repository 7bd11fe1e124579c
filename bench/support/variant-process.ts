/**
 * A variant measured in a process of its own (issue 29 item 5): V8 charges garbage collection to
 * whatever runs when it happens, so in one process a variant that yields to the event loop pays
 * for the garbage of the others; here each variant's samples carry its own allocations only.
 * The parent side of variant-worker.ts: start, run blocks, close.
 *
 * @module
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { BlockLimits, BlockSamples } from './cpu-block.ts';
import type { FromWorker, ToWorker } from './variant-worker.ts';

/** A variant's worker: runs blocks one at a time. */
export interface VariantProcess {
  variant: string;
  runBlock(limits: BlockLimits): Promise<BlockSamples>;
  close(): Promise<void>;
}

const workerPath = new URL('./variant-worker.ts', import.meta.url).pathname;

/**
 * Starts the worker of `variant` for runs of `steps` steps; resolves once its loop is made.
 * @throws Error (rejects) when the worker fails to start or make the loop.
 */
export async function startVariantProcess(
  variant: string,
  steps: number,
  dir: string,
): Promise<VariantProcess> {
  const child: ChildProcess = fork(workerPath, [variant, String(steps), dir], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The one reply awaited at a time.
  const reply = () =>
    new Promise<FromWorker>((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null) => {
        child.off('message', onMessage);
        reject(new Error(`the worker of ${variant} (${steps} steps) exited with ${code} before answering`));
      };
      child.once('message', onMessage);
      child.once('exit', onExit);
    });
  const expect = async <T extends FromWorker['type']>(type: T) => {
    const message = await reply();
    if (message.type === 'error') throw new Error(`${variant} (${steps} steps): ${message.message}`);
    if (message.type !== type) throw new Error(`${variant}: expected ${type}, got ${message.type}`);
    return message as Extract<FromWorker, { type: T }>;
  };
  const send = (message: ToWorker) => child.send(message);
  try {
    await expect('ready');
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    variant,
    async runBlock(limits) {
      const answer = expect('samples');
      send({ type: 'block', limits });
      return (await answer).samples;
    },
    async close() {
      if (child.exitCode === null && child.connected) send({ type: 'close' });
      const timer = setTimeout(() => child.kill(), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
