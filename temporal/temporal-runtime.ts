/**
 * The runtime's surface over Temporal (issue 14, docs/temporal.md §Client): the client side of
 * runs whose steps run in workers (`createTemporalWorker`).
 *
 * | call | module | does |
 * |---|---|---|
 * | `start(options)` | temporal-start.ts | the run's root span, its workflow started under the run id |
 * | `get(runId)`, and each answer by id | temporal-run-handle.ts | a handle: outcome, status and events by query, answers as signals or an update |
 * | `list(limit)` | here | the task queue's runs from Temporal's visibility |
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { InDoubtResolution } from '../machines/run-context.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';
import { Payloads } from './payload-store.ts';
import { RUN_MEMO, type RunMemo } from './run-visibility.ts';
import { type RunHandleParts, type TemporalRunHandle, temporalRunHandle } from './temporal-run-handle.ts';
import type { TemporalRuntimeOptions } from './temporal-runtime-options.ts';
import { type StartParts, startRunWorkflow, type TemporalStartOptions } from './temporal-start.ts';
import { RUN_WORKFLOW } from './workflow-types.ts';

export { TemporalRunAnswerError, type TemporalRunHandle } from './temporal-run-handle.ts';
export type { TemporalRuntimeOptions } from './temporal-runtime-options.ts';
export { TemporalRunIdInUseError, type TemporalStartOptions } from './temporal-start.ts';

/** A run in the task queue's list (`list`). */
export interface TemporalRunListing {
  runId: string;
  /** toolwarden's status (a run canceled or failed by toolwarden is a workflow that completed). */
  status: string;
  /** Temporal's (`TERMINATED`, `TIMED_OUT` … say more). */
  temporalStatus: string;
  /** What it waits for, if anything. */
  awaiting: string | null;
  startTime: Date;
}

/**
 * The runtime's surface over Temporal (issue 14, docs/temporal.md): `start` starts the run
 * workflow, answers go as signals (checked against the run's status first) or an update
 * (confirmation, validated in the workflow), and events are read with a query. Switch an app
 * from `createRuntime` by configuration: the planner, tools and policies move to
 * `createTemporalWorker`.
 */
export function temporalRuntime(options: TemporalRuntimeOptions) {
  const start: StartParts = {
    caps: options.caps ?? DEFAULT_CAPS,
    toolTimeoutsMs: Object.fromEntries(
      (options.tools ?? [])
        .filter((tool) => tool.timeoutMs !== undefined)
        .map((tool) => [tool.id, tool.timeoutMs!]),
    ),
    searchAttributes: options.searchAttributes ?? true,
  };
  const handles: RunHandleParts = {
    client: options.client,
    statusTimeoutMs: options.statusTimeoutMs ?? 2_000,
    eventPollMs: options.eventPollMs ?? 200,
    payloads: options.payloadStore ? new Payloads({ store: options.payloadStore }, 0) : undefined,
  };
  const get = (runId: string): TemporalRunHandle =>
    temporalRunHandle(options.client.workflow.getHandle(runId), runId, handles);
  return {
    taskQueue: options.taskQueue,
    /** Starts a run as a workflow whose id is the run id. */
    async start(run: TemporalStartOptions): Promise<TemporalRunHandle> {
      const { runId, workflow } = await startRunWorkflow(options, start, run);
      return temporalRunHandle(workflow, runId, handles);
    },
    /** A handle on a run started earlier (by any process). */
    get,
    /**
     * Runs on this task queue, newest first (Temporal's visibility, eventually consistent):
     * `status` is toolwarden's (a run canceled or failed by toolwarden is a workflow that
     * completed), `temporalStatus` Temporal's (`TERMINATED`, `TIMED_OUT` … say more), `awaiting`
     * what it waits for.
     */
    list: (limit = 100): Promise<TemporalRunListing[]> => listRuns(options.client, options.taskQueue, limit),
    provideClarification: (runId: string, answer: { id: string; answer: string }) =>
      get(runId).provideClarification(answer),
    confirm: (runId: string, answer: { id: string; approved: boolean; by?: string; reason?: string }) =>
      get(runId).confirm(answer),
    cancel: (runId: string, reason?: string) => get(runId).cancel(reason),
    resolveInDoubt: (runId: string, resolutions: Record<string, InDoubtResolution>) =>
      get(runId).resolveInDoubt(resolutions),
  };
}

/** The task queue's runs, newest first, at most `limit` (Temporal's visibility, eventually consistent). */
async function listRuns(client: Client, taskQueue: string, limit: number): Promise<TemporalRunListing[]> {
  const out: TemporalRunListing[] = [];
  const query = `WorkflowType = '${RUN_WORKFLOW}' AND TaskQueue = '${taskQueue.replaceAll("'", "\\'")}'`;
  for await (const info of client.workflow.list({ query })) {
    const memo = info.memo?.[RUN_MEMO] as RunMemo | undefined;
    const temporalStatus = info.status.name;
    // A workflow that did not complete ended outside toolwarden (terminated, timed out).
    const status = temporalStatus === 'RUNNING' || temporalStatus === 'COMPLETED' ? memo?.status : undefined;
    out.push({
      runId: info.workflowId,
      status: status ?? temporalStatus.toLowerCase(),
      temporalStatus,
      awaiting: memo?.awaiting?.kind ?? null,
      startTime: info.startTime,
    });
    if (out.length >= limit) break;
  }
  return out;
}

/** The type of {@link temporalRuntime}'s result. */
export type TemporalRuntime = ReturnType<typeof temporalRuntime>;
