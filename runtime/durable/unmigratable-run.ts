/**
 * A stored run this release cannot migrate (docs/durability.md §Upgrades), restored as a failed
 * run: never a crash, never a restore retried on every sweep.
 *
 * - The handle is final: `status` is `failed`, `result()` resolves `{ status: 'failed', error:
 *   { name: 'SnapshotMigrationError', message, recoverable: false } }` once the store says so,
 *   `events$` gives the `run_failed` event and completes.
 * - The store: an unfinished run (`running`, `awaiting`) is saved once as `failed` with that
 *   `run_failed` event, its snapshot kept exactly as it was (a release with a mended migrator can
 *   still read it: `runtime.resume(runId)` restores a finished run on demand), and released.
 *   Recovery lists unfinished runs only, so it never comes back to it.
 *
 * @module
 */

import { createActor } from 'xstate';
import type { RunContext } from '../../machines/run-context.ts';
import type { RunMachine } from '../../machines/run-machine.ts';
import type { RunFailedEvent } from '../../run/run-events.ts';
import type { RunStore, StoredRun } from '../../stores/run-store.ts';
import type { ToolCatalog } from '../../tools/tool-catalog.ts';
import { RunHandle } from '../run-handle.ts';
import type { OnRuntimeError } from '../runtime-options.ts';
import type { SnapshotMigrationError } from './snapshot-migration.ts';

/** What restoring an unmigratable run needs from the runtime. */
export interface UnmigratableRunParts {
  machine: RunMachine;
  agent: { id: string; name?: string };
  catalog: ToolCatalog;
  store: RunStore;
  /** This runtime instance's lease holder (`<owner>#<instance>`), which claimed the run. */
  owner: string;
  /** The runtime's caps, for the failed run's context (it never runs). */
  caps: RunContext['caps'];
  onError: OnRuntimeError;
}

/** The failed handle of `stored`, whose snapshot failed to migrate with `error`; writes the failure. */
export function unmigratableRun(
  parts: UnmigratableRunParts,
  stored: StoredRun,
  error: SnapshotMigrationError,
): RunHandle {
  const { runId } = stored;
  parts.onError(error, `restore run ${runId}`);
  const runError = { name: error.name, message: error.message, recoverable: false };
  const failed: RunFailedEvent = { type: 'run_failed', runId, at: Date.now(), error: runError };
  const context = failedContext(parts, stored, runError);
  const actor = createActor(parts.machine, {
    snapshot: {
      status: 'done',
      value: 'failed',
      context,
      children: {},
      historyValue: {},
      output: undefined,
      error: undefined,
    } as never,
    input: undefined as never,
  });
  const handle = new RunHandle(actor, parts.catalog);
  const written = storeFailure(parts, stored, failed);
  handle.attachStorage({
    get status() {
      return { state: 'saved' as const, version: stored.version };
    },
    persisted: () => written,
  });
  handle.publish(failed);
  actor.start();
  handle.close();
  handle.settle();
  return handle;
}

/**
 * A context for the failed run: the stored row's own fields (id, session, labels), the stored
 * transcript when it is a list, and the error. Everything else is a new run's.
 */
function failedContext(
  parts: UnmigratableRunParts,
  stored: StoredRun,
  error: RunFailedEvent['error'],
): RunContext {
  const storedContext = (stored.snapshot as { context?: { messages?: unknown } } | null)?.context;
  const messages = Array.isArray(storedContext?.messages) ? storedContext.messages : [];
  // An actor never started: only its initial context is read (the machine's own defaults).
  const initial = createActor(parts.machine, {
    input: {
      runId: stored.runId,
      agent: parts.agent,
      ...(stored.sessionId === undefined ? {} : { sessionId: stored.sessionId }),
      labels: stored.labels ?? {},
      messages: [],
      caps: parts.caps,
      startedAt: stored.createdAt,
    },
  }).getSnapshot().context;
  return { ...initial, messages, flow: { ...initial.flow, error } };
}

/** Saves an unfinished run as failed (snapshot unchanged) and releases it; resolves either way. */
async function storeFailure(
  parts: UnmigratableRunParts,
  stored: StoredRun,
  failed: RunFailedEvent,
): Promise<void> {
  if (stored.status !== 'running' && stored.status !== 'awaiting') return;
  try {
    await parts.store.save(stored.runId, {
      expectedVersion: stored.version,
      status: 'failed',
      snapshot: stored.snapshot,
      events: [{ event: failed, at: failed.at }],
    });
    await parts.store.release?.(stored.runId, parts.owner);
  } catch (error) {
    parts.onError(error, `store the failure of run ${stored.runId}`);
  }
}
