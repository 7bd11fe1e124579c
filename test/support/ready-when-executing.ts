import { writeSync } from 'node:fs';
import type { PersistedWrite } from '../../runtime/durable/run-persister.ts';

/**
 * A child worker's `durable.onPersisted` that prints `READY` on stdout once `runs` distinct runs
 * have been stored executing a call: the parent test waits for that line, then kills the worker
 * (test/durable-recover.test.ts, test/reliability/effects-kill.test.ts).
 */
export function readyWhenExecuting(runs: number): (write: PersistedWrite) => void {
  const executing = new Set<string>();
  return (write) => {
    if (write.state !== 'executing' || executing.has(write.runId)) return;
    executing.add(write.runId);
    if (executing.size === runs) writeSync(1, 'READY\n');
  };
}
