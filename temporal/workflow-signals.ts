/**
 * The run workflow's signals, update and queries (docs/temporal.md §Client): how a client answers
 * and reads a run. Workflow code: Temporal's sandbox, no Node built-ins.
 *
 * @module
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { InDoubtResolution } from '../machines/run-context.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { TranscriptPage } from './transcript-ref.ts';
import type { RunEventsPage, RunWorkflowStatus } from './workflow-types.ts';

export const clarificationSignal = defineSignal<[{ id: string; answer: string }]>('provide.clarification');
export const toolResultsSignal =
  defineSignal<[{ id: string; results: ToolResultJSON[] }]>('provide.toolResults');
export const cancelSignal = defineSignal<[{ reason?: string }]>('cancel');
/** Settles the calls the run holds in doubt (docs/durability.md §Effects): toolCallId → resolution. */
export const inDoubtSignal =
  defineSignal<[{ resolutions: Record<string, InDoubtResolution> }]>('resolve.inDoubt');
export const confirmUpdate = defineUpdate<
  void,
  [{ id: string; approved: boolean; by?: string; reason?: string }]
>('confirm');
export const statusQuery = defineQuery<RunWorkflowStatus>('status');
export const eventsQuery = defineQuery<RunEventsPage, [number]>('events');
/** Messages `from … to − 1` of the run's transcript, a page (~1 MB) at a time (`transcript-ref.ts`). */
export const transcriptQuery = defineQuery<TranscriptPage, [number, number]>('transcript');
