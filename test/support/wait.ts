import type { RunStatus, RunStore } from '../../stores/run-store.ts';

/** Polls `condition` every few ms until it holds; throws after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Waits until the store holds `runId` with `status` (writes are asynchronous). */
export async function storedAs(
  store: RunStore,
  runId: string,
  status: RunStatus,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await store.load(runId))?.status !== status) {
    if (Date.now() > deadline) throw new Error(`run ${runId} not stored as ${status} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
