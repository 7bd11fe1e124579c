import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** What one execution of a workflow wrote: its input's bytes and its largest event's payload bytes. */
export interface ExecutionPayloads {
  runId: string;
  events: number;
  /** Bytes of the execution's input (the continue-as-new input after the first). */
  inputBytes: number;
  /** The most payload bytes one event holds (an activity's input or result, the input, the result). */
  largestPayload: number;
  /** Payload bytes of the whole history. */
  totalPayload: number;
  /** Bytes of the workflow's result, for the execution that completed (0 for the others). */
  resultBytes: number;
  /** The activities it scheduled, by type, in order. */
  activities: string[];
}

/** Bytes of every payload's `data` under `value` (history events hold them as Uint8Arrays). */
function payloadBytes(value: unknown): number {
  if (value instanceof Uint8Array) return 0;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + payloadBytes(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  let sum = 0;
  for (const [key, child] of Object.entries(value)) {
    if (key === 'data' && child instanceof Uint8Array) sum += child.byteLength;
    else sum += payloadBytes(child);
  }
  return sum;
}

/**
 * Every execution of workflow `workflowId`, first to last (followed back from the latest through
 * each start event's `continuedExecutionRunId`), with what its history's payloads weigh.
 */
export async function historyPayloads(client: Client, workflowId: string): Promise<ExecutionPayloads[]> {
  const out: ExecutionPayloads[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    const sizes = events.map(payloadBytes);
    const started: temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes | null | undefined =
      events[0]?.workflowExecutionStartedEventAttributes;
    out.unshift({
      runId,
      events: events.length,
      inputBytes: payloadBytes(started?.input),
      largestPayload: Math.max(0, ...sizes),
      totalPayload: sizes.reduce((a: number, b: number) => a + b, 0),
      activities: events.flatMap((event) => {
        const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
        return name ? [name] : [];
      }),
      resultBytes: payloadBytes(events.at(-1)?.workflowExecutionCompletedEventAttributes?.result ?? null),
    });
    runId = started?.continuedExecutionRunId || undefined;
  }
  return out;
}
