import type { RememberedApproval, RunContext } from '../machines/run-context.ts';
import type { Message } from '../run/message.ts';
import type { RunStore, StoredRun } from '../stores/run-store.ts';
import { migrateSnapshot } from './durable/snapshot-migration.ts';

/**
 * Thrown by `runtime.continueSession` while a run of the session is still running or awaiting:
 * a conversation has one run at a time, so the next one would not see its answer. Answer or
 * cancel that run (`runId`) first.
 */
export class SessionBusyError extends Error {
  override readonly name = 'SessionBusyError';
  constructor(
    readonly sessionId: string,
    /** The run in progress. */
    readonly runId: string,
    readonly status: StoredRun['status'],
  ) {
    super(
      `Session "${sessionId}" has a run in progress (${runId}, ${status}): answer or cancel it before the next one`,
    );
  }
}

/**
 * What a session's next run starts from (docs/threads.md): the messages of its latest started run
 * that has finished, and the approvals it remembered (docs/policies.md §Sticky approvals), read
 * from the store; none for a new session.
 *
 * @throws SessionBusyError when a run of the session is running or awaiting;
 *   SnapshotMigrationError / SnapshotFormatTooNewError when this release cannot read that run's
 *   snapshot (docs/durability.md §Upgrades).
 */
export async function sessionStart(
  store: RunStore,
  sessionId: string,
): Promise<{ messages: Message[]; approvals: RememberedApproval[] }> {
  const runs = await store.list({ sessionId });
  const busy = runs.find((run) => run.status === 'running' || run.status === 'awaiting');
  if (busy !== undefined) throw new SessionBusyError(sessionId, busy.runId, busy.status);
  // Latest by start, not by last update: an old run canceled late is not the conversation's end.
  const latest = runs.reduce<StoredRun | undefined>(
    (newest, run) => (newest === undefined || run.createdAt > newest.createdAt ? run : newest),
    undefined,
  );
  if (latest === undefined) return { messages: [], approvals: [] };
  // Throws when this release cannot read it: a conversation is never continued without its past.
  const snapshot = migrateSnapshot(latest.snapshot, { runId: latest.runId }) as {
    context?: Pick<RunContext, 'messages' | 'flow'>;
  };
  return {
    messages: snapshot.context?.messages ?? [],
    // Absent in snapshots written before remembered approvals: none.
    approvals: snapshot.context?.flow?.approvals ?? [],
  };
}
