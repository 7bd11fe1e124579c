import { randomUUID } from 'node:crypto';
import { SpanStatusCode, type TracerProvider, trace } from '@opentelemetry/api';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Observable } from 'rxjs';
import type { InDoubtResolution, RunInput } from '../machines/run-context.ts';
import { type Caps, DEFAULT_CAPS } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { RunEvent } from '../run/run-events.ts';
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_TOOLWARDEN_RUN_ID,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  INSTRUMENTATION_SCOPE,
  invokeAgentSpanName,
} from '../telemetry/attributes.ts';
import { traceContextCarrier } from '../telemetry/trace-context.ts';
import type { Tool } from '../tools/define-tool.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { type PayloadStore, Payloads } from './payload-store.ts';
import { RUN_MEMO, type RunMemo } from './run-visibility.ts';
import {
  RUN_WORKFLOW,
  type RunEventsPage,
  type RunWorkflowResult,
  type RunWorkflowStatus,
  SEARCH_ATTRIBUTES,
} from './workflow-types.ts';

/** Options of {@link temporalRuntime}. */
export interface TemporalRuntimeOptions {
  /** A connected `@temporalio/client` Client. */
  client: Client;
  taskQueue: string;
  agent: { id: string; name?: string };
  /** The run's caps (the worker's steps enforce them). Default `DEFAULT_CAPS`. */
  caps?: Caps;
  /**
   * Not needed: the worker reports each tool's timeout with the planner turn that calls it, and
   * the workflow sizes the call's activity by it. Given, their `timeoutMs` serve runs whose
   * workers do not report them (earlier releases).
   */
  tools?: Pick<Tool, 'id' | 'timeoutMs'>[];
  defaultToolTimeoutMs?: number;
  /**
   * Heartbeat timeout of each planner turn and tool call activity, ms: a worker that dies is
   * noticed this long after its last heartbeat (docs/temporal.md §Crashes and cancel). Default 5 000.
   */
  heartbeatTimeoutMs?: number;
  /**
   * The workers' payload store (`createTemporalWorker({ payloads: { store } })`): `result()` reads
   * the results held by reference back. Without it, those results keep their `$toolwardenPayload`
   * reference.
   */
  payloadStore?: PayloadStore;
  /**
   * Whether runs carry toolwarden's search attributes (`SEARCH_ATTRIBUTES`: ToolwardenStatus,
   * ToolwardenAwaiting), so `temporal workflow list --query "ToolwardenAwaiting = 'clarification'"`
   * finds the runs waiting for a person. They must be registered on the namespace
   * (`scripts/temporal.sh` does on the dev server; `temporal operator search-attribute create`
   * on a cluster): a start fails with the server's error otherwise. Default true.
   */
  searchAttributes?: boolean;
  /**
   * How long `status()` waits for a worker to answer its query before it reads the status the
   * workflow left in its memo (no worker running: docs/temporal.md §Visibility), ms. Default 2 000.
   */
  statusTimeoutMs?: number;
  /** How often `events$` asks the workflow for new events, ms. Default 200. */
  eventPollMs?: number;
  /**
   * Where `start`'s `invoke_agent` span goes: the run's root, whose trace context the workflow
   * carries to every step (docs/temporal.md §Telemetry). Default: the global provider.
   */
  tracerProvider?: TracerProvider;
  /**
   * When a run's workflow continues as new (docs/temporal.md §History): at an idle point once
   * Temporal suggests it (the server's dynamic config
   * `limit.historyCount.suggestContinueAsNew` and `limit.historySize.suggestContinueAsNew`), or
   * once an execution's history has `maxEvents` events or `maxBytes` bytes. Default: the suggestion only.
   */
  history?: { maxEvents?: number; maxBytes?: number };
  /**
   * The last tool results a run's workflow keeps, hands on at continue-as-new and returns in its
   * result (`toolResultCount` counts all; every result is in the events). Default 100.
   */
  resultToolResults?: number;
  /**
   * …and at most this much of their JSON, characters (the newest that fit; results below the
   * workers' `inlineBytes` ride inline). Default 512 KiB: with the 100 events handed on (at most
   * 256 KiB) and one turn's messages, a continue-as-new input stays well below Temporal's 2 MB.
   */
  resultBytes?: number;
}

/** What `start` takes (as `createRuntime().start`). */
export interface TemporalStartOptions {
  runId?: string;
  messages: Message[];
  sessionId?: string;
  labels?: Record<string, string>;
  caps?: Partial<Caps>;
}

/**
 * Thrown by `start` for a run id a workflow already has, running or closed (docs/temporal.md
 * §Run ids): a run's toolCallIds are made of its id, so a second run under it would present the
 * first one's idempotency keys, and a tool that deduplicates by them would skip its effects.
 */
export class TemporalRunIdInUseError extends Error {
  override readonly name = 'TemporalRunIdInUseError';
}

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

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_canceled']);

/**
 * The runtime's surface over Temporal (issue 14, docs/temporal.md): `start` starts the run
 * workflow, answers go as signals (checked against the run's status first) or an update
 * (confirmation, validated in the workflow), and events are read with a query. Switch an app
 * from `createRuntime` by configuration: the planner, tools and policies move to
 * `createTemporalWorker`.
 */
export function temporalRuntime(options: TemporalRuntimeOptions) {
  const caps = options.caps ?? DEFAULT_CAPS;
  const toolTimeoutsMs = Object.fromEntries(
    (options.tools ?? [])
      .filter((tool) => tool.timeoutMs !== undefined)
      .map((tool) => [tool.id, tool.timeoutMs!]),
  );
  const searchAttributes = options.searchAttributes ?? true;
  const payloads = options.payloadStore ? new Payloads({ store: options.payloadStore }, 0) : undefined;
  const handleOf = (workflow: WorkflowHandle, runId: string): TemporalRunHandle => {
    // A worker answers the query; without one, the memo the workflow keeps says as of its last change.
    const status = async (): Promise<RunWorkflowStatus> => {
      try {
        return await options.client.withDeadline(Date.now() + (options.statusTimeoutMs ?? 2_000), () =>
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
    };
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
    return {
      runId,
      workflowId: workflow.workflowId,
      result: async () => {
        const outcome = (await workflow.result()) as RunWorkflowResult;
        return payloads ? { ...outcome, toolResults: await payloads.results(outcome.toolResults) } : outcome;
      },
      status,
      events,
      events$: new Observable<RunEvent>((subscriber) => {
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
            await new Promise((resolve) => setTimeout(resolve, options.eventPollMs ?? 200));
          }
        };
        void poll();
        return () => {
          stopped = true;
        };
      }),
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
  };
  return {
    taskQueue: options.taskQueue,
    /** Starts a run as a workflow whose id is the run id. */
    async start(start: TemporalStartOptions): Promise<TemporalRunHandle> {
      // Random, as in process: ids made of the clock and a counter collided across client processes.
      const runId = start.runId ?? randomUUID();
      const run: RunInput = {
        runId,
        agent: options.agent,
        messages: start.messages,
        caps: { ...caps, ...start.caps },
        ...(start.sessionId === undefined ? {} : { sessionId: start.sessionId }),
        ...(start.labels === undefined ? {} : { labels: start.labels }),
        startedAt: Date.now(),
      };
      // The run's root span: a child of the caller's active span; its context rides in the run.
      const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE);
      const span = tracer.startSpan(invokeAgentSpanName(options.agent.name ?? options.agent.id), {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
          [ATTR_GEN_AI_AGENT_ID]: options.agent.id,
          [ATTR_GEN_AI_AGENT_NAME]: options.agent.name ?? options.agent.id,
          [ATTR_TOOLWARDEN_RUN_ID]: runId,
          ...(start.sessionId === undefined ? {} : { [ATTR_GEN_AI_CONVERSATION_ID]: start.sessionId }),
        },
      });
      const traceContext = traceContextCarrier(span.spanContext());
      if (traceContext) run.traceContext = traceContext;
      try {
        const summary = startSummary(options.agent, start.messages);
        const workflow = await options.client.workflow.start(RUN_WORKFLOW, {
          taskQueue: options.taskQueue,
          workflowId: runId,
          // A run id names one run: refused while a workflow with it runs or is retained closed.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          workflowIdConflictPolicy: 'FAIL',
          // What the Web UI shows: the agent and the request, the status in the memo and, with
          // `searchAttributes`, as search attributes the workflow keeps up to date (§Visibility).
          staticSummary: summary,
          memo: { [RUN_MEMO]: { status: 'running', state: 'planning', awaiting: null } satisfies RunMemo },
          ...(searchAttributes
            ? {
                typedSearchAttributes: [
                  { key: { name: SEARCH_ATTRIBUTES.status, type: 'KEYWORD' as const }, value: 'running' },
                ],
              }
            : {}),
          args: [
            {
              run,
              toolTimeoutsMs,
              visibility: { searchAttributes },
              summary,
              ...(options.history === undefined ? {} : { history: options.history }),
              ...(options.resultToolResults === undefined
                ? {}
                : { resultToolResults: options.resultToolResults }),
              ...(options.resultBytes === undefined ? {} : { resultBytes: options.resultBytes }),
              ...(options.heartbeatTimeoutMs === undefined
                ? {}
                : { heartbeatTimeoutMs: options.heartbeatTimeoutMs }),
              ...(options.defaultToolTimeoutMs === undefined
                ? {}
                : { defaultToolTimeoutMs: options.defaultToolTimeoutMs }),
            },
          ],
        });
        return handleOf(workflow, runId);
      } catch (caught) {
        const error =
          (caught as Error)?.name === 'WorkflowExecutionAlreadyStartedError'
            ? new TemporalRunIdInUseError(
                `Run id "${runId}" is taken: a workflow with this id runs or has run (its toolCallIds would repeat the first run's idempotency keys). Start with a new run id, or read the first run with get("${runId}").`,
                { cause: caught },
              )
            : caught;
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : String(error),
        });
        throw error;
      } finally {
        // It covers the start: the run's steps are its children, in whichever worker runs them.
        span.end();
      }
    },
    /** A handle on a run started earlier (by any process). */
    get(runId: string): TemporalRunHandle {
      return handleOf(options.client.workflow.getHandle(runId), runId);
    },
    /**
     * Runs on this task queue, newest first (Temporal's visibility, eventually consistent):
     * `status` is toolwarden's (a run canceled or failed by toolwarden is a workflow that
     * completed), `temporalStatus` Temporal's (`TERMINATED`, `TIMED_OUT` … say more), `awaiting`
     * what it waits for.
     */
    async list(
      limit = 100,
    ): Promise<
      { runId: string; status: string; temporalStatus: string; awaiting: string | null; startTime: Date }[]
    > {
      const out: {
        runId: string;
        status: string;
        temporalStatus: string;
        awaiting: string | null;
        startTime: Date;
      }[] = [];
      const query = `WorkflowType = '${RUN_WORKFLOW}' AND TaskQueue = '${options.taskQueue.replaceAll("'", "\\'")}'`;
      for await (const info of options.client.workflow.list({ query })) {
        const memo = info.memo?.[RUN_MEMO] as RunMemo | undefined;
        const temporalStatus = info.status.name;
        // A workflow that did not complete ended outside toolwarden (terminated, timed out).
        const status =
          temporalStatus === 'RUNNING' || temporalStatus === 'COMPLETED' ? memo?.status : undefined;
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
    },
    provideClarification: (runId: string, answer: { id: string; answer: string }) =>
      handleOf(options.client.workflow.getHandle(runId), runId).provideClarification(answer),
    confirm: (runId: string, answer: { id: string; approved: boolean; by?: string; reason?: string }) =>
      handleOf(options.client.workflow.getHandle(runId), runId).confirm(answer),
    cancel: (runId: string, reason?: string) =>
      handleOf(options.client.workflow.getHandle(runId), runId).cancel(reason),
    resolveInDoubt: (runId: string, resolutions: Record<string, InDoubtResolution>) =>
      handleOf(options.client.workflow.getHandle(runId), runId).resolveInDoubt(resolutions),
  };
}

/** The start summary the Web UI lists a run with: the agent and the first words of the last user message. */
function startSummary(agent: { id: string; name?: string }, messages: Message[]): string {
  const ask = messages.findLast((message) => message.role === 'user')?.content ?? '';
  const line = ask.replace(/\s+/g, ' ').trim();
  return `${agent.name ?? agent.id}: ${line.length > 120 ? `${line.slice(0, 119)}…` : line}`;
}

/** The type of {@link temporalRuntime}'s result. */
export type TemporalRuntime = ReturnType<typeof temporalRuntime>;
