/**
 * The transcript leaves history (transcript-ref.ts): a planner turn gets the messages new since the
 * last turn, the transcript's length and digest; the worker reads the rest by query. Its first
 * `base` messages were archived in the payload store by an earlier execution
 * (transcript-archive.ts): the machine's `context.messages` holds the messages from `base` on.
 * Workflow code: Temporal's sandbox, no Node built-ins.
 *
 * @module
 */
import { isCancellation } from '@temporalio/workflow';
import type { PlanActorInput } from '../machines/run-ports.ts';
import type { Message } from '../run/message.ts';
import type { PlanStepInput } from './activities.ts';
import {
  type ArchivedTranscript,
  PrefixDigests,
  type TranscriptPage,
  transcriptPage,
} from './transcript-ref.ts';
import type { WorkflowActivities } from './workflow-activities.ts';
import type { ContinuedRun } from './workflow-types.ts';

/** The transcript of one execution: what planner turns were sent of it, and what is archived. */
export class WorkflowTranscript {
  /** Messages an earlier execution archived (the machine holds those from `base` on). */
  readonly archived: ArchivedTranscript | undefined;
  readonly base: number;
  private readonly digests: PrefixDigests;
  /** Messages workers were sent (those after belong to the turn in progress). */
  sentMark: number;

  constructor(continued: ContinuedRun | undefined) {
    this.archived = continued?.archived;
    this.base = this.archived?.length ?? 0;
    this.digests = new PrefixDigests(this.base, this.archived?.digest);
    this.sentMark = continued?.sentMark ?? 0;
  }

  /** A planner turn's activity input: the messages new since the last turn, by reference otherwise. */
  planInput(step: PlanActorInput): PlanStepInput {
    const { base, archived } = this;
    const messages = step.context.messages;
    const length = base + messages.length;
    const tailFrom = Math.min(Math.max(this.sentMark, base), length);
    this.sentMark = length;
    return {
      ...step,
      // Planners never read the context's hints (each failed call's tool message carries its
      // own): out of the turn's input, whose history copy they made grow with the run (issue 36 item 7).
      context: { ...step.context, messages: [], hints: [] },
      transcript: {
        length,
        digest: this.digests.extend(messages),
        tailFrom,
        tail: messages.slice(tailFrom - base),
        ...(archived ? { archived } : {}),
      },
    };
  }

  /** The `transcript` query: positions are the transcript's; those archived (below `base`) are read from the store, not here. */
  page(messages: readonly Message[], from: number, to: number): TranscriptPage {
    const { base } = this;
    if (from < base) return { messages: [], next: from };
    const page = transcriptPage(messages, from - base, to - base);
    return { messages: page.messages, next: page.next + base };
  }

  /**
   * At continue-as-new: the messages workers were sent go to the payload store through a worker,
   * so the next execution's input carries a reference instead of them (transcript-archive.ts).
   * Undefined when the worker has no store, or the archive failed: the next execution then
   * carries them, as before.
   */
  async archive(activities: WorkflowActivities, runId: string): Promise<ArchivedTranscript | undefined> {
    const { base, archived } = this;
    const to = this.sentMark;
    const digest = this.digests.at(to);
    if (to <= base || digest === undefined) return undefined;
    try {
      const stored = await activities.steps.archiveTranscript.executeWithOptions(
        {
          startToCloseTimeout: 60_000,
          heartbeatTimeout: activities.heartbeatTimeout,
          retry: { maximumAttempts: 3, initialInterval: '1 second' },
          summary: `transcript · messages ${base}–${to}`,
        },
        [{ runId, from: base, to, digest, ...(archived ? { previous: archived } : {}) }],
      );
      return stored ?? undefined;
    } catch (error) {
      if (isCancellation(error)) throw error;
      return undefined;
    }
  }
}
