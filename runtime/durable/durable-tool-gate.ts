/**
 * Write-ahead for tool calls (docs/durability.md): the plugin that holds a tool call's `execute`
 * until the snapshot holding the call (its `toolCallId`) is in the store. Otherwise a crash right
 * after a side effect could resume the run from before the call was planned, and a planner turn
 * run again could give that id to a different call (ids are `<turnId>:c<n>` when the planner sets
 * none).
 *
 * @module
 */

import type { Plugin, ToolInvocation } from '../../plugins/define-plugin.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { callAbortOf } from '../steps/execute-tool.ts';
import type { RunPersister } from './run-persister.ts';

/** The plugin's name, as `createRuntime` lists it among the plugins. */
const NAME = 'toolwarden:durable-runs';

/**
 * The write-ahead gate for `store`: each tool call waits for `persisterOf(runId).whenRecorded(id)`
 * (a run with no persister passes straight through). A volatile store (memory) does not survive a
 * crash: there is nothing to protect, and the plugin has no wrapper at all (one layer less around
 * every tool call).
 */
export function durableToolGate(
  store: Pick<RunStore, 'volatile'>,
  persisterOf: (runId: string) => RunPersister | undefined,
): Plugin {
  if (store.volatile) return { name: NAME };
  return {
    name: NAME,
    wrapToolCall(call, next) {
      const persister = persisterOf(call.meta.runId);
      // Not an async function: passing the call through would cost a promise and a tick.
      if (persister === undefined) return next(call);
      return unlessAborted(persister.whenRecorded(call.meta.toolCallId), call).then(() => next(call));
    },
  };
}

/** Waits for `promise`, or rejects with the abort's reason once the call is stopped. */
function unlessAborted<T>(promise: Promise<T>, call: ToolInvocation): Promise<T> {
  // The call's own cancellation, while its signal is the run's: no AbortSignal is made for it.
  const own = callAbortOf(call);
  if (own) {
    if (own.aborted) return Promise.reject(own.reason);
    return new Promise<T>((resolve, reject) => {
      own.whenAborted(reject);
      promise.then(resolve, reject);
    });
  }
  const { signal } = call;
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
