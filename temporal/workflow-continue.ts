/**
 * Continue-as-new (docs/temporal.md §History): when an execution hands its run on, and the
 * snapshot a next execution (of any release) starts from. Workflow code: Temporal's sandbox, no
 * Node built-ins.
 *
 * @module
 */
import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import { migrateSnapshot, SnapshotMigrationError } from '../runtime/durable/snapshot-migration.ts';
import type { RunWorkflowInput } from './workflow-types.ts';

/** Stood in for the run's context in a child's input of a snapshot handed on by an earlier release. */
const SAME_CONTEXT = '$context';

/** What Temporal says of this execution's history at one point of the workflow. */
interface HistoryReading {
  length: number;
  bytes: number;
  suggested: boolean;
}

/**
 * Whether this execution continues as new: at an idle point once Temporal suggests it or a
 * configured limit is reached, and only after it took a planner turn (a huge transcript cannot
 * loop).
 *
 * The history's length and size are read only where a replay reads the same values: when the
 * execution starts, and in the activation that resolves an activity, a timer or a signal
 * ({@link ContinueAsNewGate.read}); never after a local activity. A local activity that outlives
 * its workflow task resolves, live, in a later task (a longer history) than the one a replay
 * resolves it in: read there, a run at `maxEvents` continued as new live and planned on replay, a
 * nondeterminism error that failed the workflow task (seen in CI under load: task started at
 * event 97, the review's marker at 99, a task of no commands started at 101 ≥ the limit 100).
 */
export class ContinueAsNewGate {
  /** A planner turn found it due: the machine is parked there until the execution hands on. */
  continuing = false;
  /** Planner turns this execution took. */
  planned = 0;
  /**
   * Runs started by a worker without continue-as-new (their histories lack this marker) never
   * continue as new when a newer worker replays them: that would be a command their history lacks.
   */
  private readonly mayContinue: boolean;
  /**
   * Likewise runs started before the transcript's archive (transcript-archive.ts) continue as new
   * without it. Asked here, at the start: a patch asked later, after a local activity that outlived
   * its workflow task, is looked for in another task on replay than the one it was recorded in.
   */
  readonly mayArchive: boolean;
  /**
   * Executions started before the history was read only at replay-stable points keep reading it
   * wherever `due()` is asked (what their histories recorded).
   */
  private readonly readsStable: boolean;
  /** The last replay-stable reading. */
  private reading: HistoryReading;

  /** Asks the patches, in this order (the order their markers have in the history). */
  constructor(private readonly limits: RunWorkflowInput['history']) {
    this.mayContinue = patched('toolwarden.continue-as-new');
    this.mayArchive = patched('toolwarden.transcript-archive');
    this.readsStable = patched('toolwarden.continue-as-new-stable-reading');
    this.reading = readHistory();
  }

  /**
   * Takes a reading of the history: call it only in an activation a history event of its own
   * started (an activity's, a timer's or a signal's result), right where that result arrives.
   */
  read(): void {
    this.reading = readHistory();
  }

  due(): boolean {
    if (this.planned === 0 || !this.mayContinue) return false;
    const info = this.readsStable ? this.reading : readHistory();
    const limits = this.limits ?? {};
    return (
      info.suggested ||
      (limits.maxEvents !== undefined && info.length >= limits.maxEvents) ||
      (limits.maxBytes !== undefined && info.bytes >= limits.maxBytes)
    );
  }
}

function readHistory(): HistoryReading {
  const info = workflowInfo();
  return { length: info.historyLength, bytes: info.historySize, suggested: info.continueAsNewSuggested };
}

/**
 * The snapshot an earlier execution handed on, in this release's format (docs/durability.md
 * §Upgrades): its `$context` references put back, then migrated. One this worker cannot migrate
 * fails the run (a non-retryable SnapshotMigrationError); one from a newer release fails the
 * workflow task, which Temporal retries until a worker of that release takes it.
 */
export function continuedSnapshot(persisted: unknown): unknown {
  try {
    return migrateSnapshot(withContext(persisted));
  } catch (error) {
    if (error instanceof SnapshotMigrationError)
      throw ApplicationFailure.nonRetryable(error.message, error.name);
    throw error;
  }
}

type PersistedChildren = Record<string, { snapshot?: { input?: { context?: unknown } } }>;

/**
 * A snapshot handed on by a worker of an earlier release, whose children's inputs referred to the
 * run's context as `$context` (a planner turn was a child invoked with the context), with the
 * context put back. Since the `steps` actor no child's input holds the context, so a snapshot
 * handed on now needs nothing of this.
 */
function withContext(persisted: unknown): unknown {
  const snapshot = persisted as { context: unknown; children: PersistedChildren };
  for (const child of Object.values(snapshot.children)) {
    const input = child.snapshot?.input;
    if (input?.context === SAME_CONTEXT) input.context = snapshot.context;
  }
  return snapshot;
}
