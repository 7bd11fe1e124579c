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
  runBlock(steps: number, limits: BlockLimits): Promise<BlockSamples>;
  close(): Promise<void>;
}

const workerPath = new URL('./variant-worker.ts', import.meta.url).pathname;
/**
 * Workers load the TypeScript as `npm run build` compiles it (`bench/as-built.mjs`): what an app
 * runs. Under tsx (`keepNames`) every named closure made costs an `Object.defineProperty`, 4.8%
 * of the default runtime's self time (docs/benchmarks.md), which the package does not pay.
 */
const asBuilt = new URL('../as-built.mjs', import.meta.url).pathname;

/** Workers not closed yet: killed if the bench is interrupted (a 500-step peer run can take minutes). */
const live = new Set<ChildProcess>();
let killOnSignal = false;

function killLiveWorkersOnSignal(): void {
  if (killOnSignal) return;
  killOnSignal = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      for (const child of live) child.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
}

/**
 * Starts the worker of `variant`; resolves once it has loaded the variant.
 * @throws Error (rejects) when the worker fails to start or load the variant.
 */
export async function startVariantProcess(variant: string, dir: string): Promise<VariantProcess> {
  const child: ChildProcess = fork(workerPath, [variant, dir], {
    execArgv: ['--import', asBuilt],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Structured clone, not JSON: a block's unbounded `ms` (Infinity) must not arrive as null.
    serialization: 'advanced',
  });
  live.add(child);
  killLiveWorkersOnSignal();
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      live.delete(child);
      resolve();
    }),
  );
  // The one reply awaited at a time.
  const reply = () =>
    new Promise<FromWorker>((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null) => {
        child.off('message', onMessage);
        reject(new Error(`the worker of ${variant} exited with ${code} before answering`));
      };
      child.once('message', onMessage);
      child.once('exit', onExit);
    });
  const expect = async <T extends FromWorker['type']>(type: T) => {
    const message = await reply();
    if (message.type === 'error') throw new Error(`${variant}: ${message.message}`);
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
    async runBlock(steps, limits) {
      const answer = expect('samples');
      send({ type: 'block', steps, limits });
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
