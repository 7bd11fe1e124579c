/**
 * A run on Temporal as a client holds it (docs/temporal.md §Client): its outcome, status and
 * events by query, and its answers as signals (checked against the run's status first) or an
 * update (confirmation, validated in the workflow).
 *
 * @module
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Observable } from 'rxjs';
import type { InDoubtResolution } from '../machines/run-context.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { Payloads } from './payload-store.ts';
import { RUN_MEMO, type RunMemo } from './run-visibility.ts';
import type { RunEventsPage, RunWorkflowResult, RunWorkflowStatus } from './workflow-types.ts';

/** Thrown for an answer that does not fit what the run awaits (checked before it is sent). */
export class TemporalRunAnswerError extends Error {
  override readonly name = 'TemporalRunAnswerError';
}

/** A run on Temporal, driven from anywhere with a client (docs/temporal.md §Client). */
export interface TemporalRunHandle {
  readonly runId: string;
  /** The workflow id (= the run id). */
  readonly workflowId: string;
  /** The outcome, when the workflow completes. @throws WorkflowFailedError when it failed. */
  result(): Promise<RunWorkflowResult>;
  /** The `status` query: status, state, what it awaits, events so far. */
  status(): Promise<RunWorkflowStatus>;
  /** The run's events from position `from` on (the `events` query). */
  events(from?: number): Promise<RunEventsPage>;
  /** Every event of the run, in order, polled from the workflow; completes after the terminal one. */
  readonly events$: Observable<RunEvent>;
  /** @throws TemporalRunAnswerError when the run does not await this clarification. */
  provideClarification(answer: { id: string; answer: string }): Promise<void>;
  /** @throws TemporalRunAnswerError when the run does not await external tool results. */
  provideToolResults(
    results: { toolCallId: string; result?: unknown; error?: { message: string } }[],
  ): Promise<void>;
  /** An update: a wrong id is rejected by the workflow's validator (WorkflowUpdateFailedError). */
  confirm(answer: { id: string; approved: boolean; by?: string; reason?: string }): Promise<void>;
  cancel(reason?: string): Promise<void>;
  /**
   * Settles the calls the run holds in doubt (after an activity retry of a tool that may not
   * run twice; docs/durability.md §Effects), every one: toolCallId → `{ status: 'done', output }`,
   * `{ status: 'not_done' }` or `{ status: 'failed', error: { message } }`. A resolution that does
   * not name every call in doubt is ignored by the workflow (the run keeps waiting).
   *
   * @throws TemporalRunAnswerError when the run holds no call in doubt.
   */
  resolveInDoubt(resolutions: Record<string, InDoubtResolution>): Promise<void>;
}

/** What a handle needs of the runtime. */
export interface RunHandleParts {
  client: Client;
  /** How long `status()` waits for a worker's answer before it reads the memo, ms. */
  statusTimeoutMs: number;
  /** How often `events$` asks for new events, ms. */
  eventPollMs: number;
  /** Reads results held by reference back (the workers' payload store), when the client has it. */
  payloads: Payloads | undefined;
}

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_canceled']);

/** The handle of the run whose workflow is `workflow` (its id is the run id). */
export function temporalRunHandle(
  workflow: WorkflowHandle,
  runId: string,
  parts: RunHandleParts,
): TemporalRunHandle {
  const status = () => workflowStatus(workflow, parts);
  const events = (from = 0) => workflow.query<RunEventsPage, [number]>('events', from);
  const expect = async (kind: string, id?: string) => {
    const now = await status();
    if (now.awaiting?.kind !== kind || (id !== undefined && now.awaiting.id !== id)) {
      throw new TemporalRunAnswerError(
        `Run ${runId} awaits ${now.awaiting ? `${now.awaiting.kind} "${now.awaiting.id ?? ''}"` : 'nothing'} (state ${now.state}), not ${kind}${id ? ` "${id}"` : ''}`,
      );
    }
    return now;
  };
  const { payloads } = parts;
  return {
    runId,
    workflowId: workflow.workflowId,
    result: async () => {
      const outcome = (await workflow.result()) as RunWorkflowResult;
      return payloads ? { ...outcome, toolResults: await payloads.results(outcome.toolResults) } : outcome;
    },
    status,
    events,
    events$: eventStream(events, parts.eventPollMs),
    provideClarification: async (answer) => {
      await expect('clarification', answer.id);
      await workflow.signal('provide.clarification', answer);
    },
    provideToolResults: async (results) => {
      const now = await expect('external_tools');
      await workflow.signal('provide.toolResults', {
        id: now.awaiting!.id,
        results: results as ToolResultJSON[],
      });
    },
    confirm: async (answer) => {
      await workflow.executeUpdate('confirm', { args: [answer] });
    },
    resolveInDoubt: async (resolutions) => {
      await expect('in_doubt');
      await workflow.signal('resolve.inDoubt', { resolutions });
    },
    cancel: async (reason) => {
      await workflow.signal('cancel', reason === undefined ? {} : { reason });
    },
  };
}

/**
 * The `status` query's answer. A worker answers the query; without one, the memo the workflow
 * keeps says as of its last change (`fromMemo`).
 *
 * @throws the query's error when no worker answers and the workflow has no memo
 */
async function workflowStatus(workflow: WorkflowHandle, parts: RunHandleParts): Promise<RunWorkflowStatus> {
  try {
    return await parts.client.withDeadline(Date.now() + parts.statusTimeoutMs, () =>
      workflow.query<RunWorkflowStatus>('status'),
    );
  } catch (error) {
    const memo = (await workflow.describe()).memo?.[RUN_MEMO] as RunMemo | undefined;
    if (!memo) throw error;
    return {
      status: memo.status,
      state: memo.state,
      awaiting: memo.awaiting,
      eventCount: 0,
      execution: 0,
      fromMemo: true,
      ...(memo.question === undefined ? {} : { question: memo.question }),
    };
  }
}

/** Every event of the run, polled every `pollMs` from position 0; completes after the terminal one. */
function eventStream(events: (from: number) => Promise<RunEventsPage>, pollMs: number): Observable<RunEvent> {
  return new Observable<RunEvent>((subscriber) => {
    let next = 0;
    let stopped = false;
    const poll = async () => {
      while (!stopped) {
        const page = await events(next).catch(() => undefined);
        if (page) {
          for (const event of page.events) {
            subscriber.next(event);
            if (TERMINAL.has(event.type)) {
              subscriber.complete();
              return;
            }
          }
          next = page.next;
        }
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    };
    void poll();
    return () => {
      stopped = true;
    };
  });
}
