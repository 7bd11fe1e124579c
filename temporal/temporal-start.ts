/**
 * Starting a run on Temporal (docs/temporal.md §Client, §Run ids, §Telemetry): the run's input,
 * its root `invoke_agent` span (whose trace context the workflow carries to every step), and the
 * workflow started under the run id with what the Web UI shows.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { WorkflowHandle } from '@temporalio/client';
import type { RunInput } from '../machines/run-context.ts';
import type { Caps } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
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
import { RUN_MEMO, type RunMemo } from './run-visibility.ts';
import type { TemporalRuntimeOptions } from './temporal-runtime-options.ts';
import { RUN_WORKFLOW, type RunWorkflowInput, SEARCH_ATTRIBUTES } from './workflow-types.ts';

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

/** What starting needs of the runtime beyond its options. */
export interface StartParts {
  caps: Caps;
  /** Tool id → timeout, ms, from the options' `tools`. */
  toolTimeoutsMs: Record<string, number>;
  searchAttributes: boolean;
}

/**
 * Starts the run's workflow (its id the run id, a random UUID when none is given) under its root
 * span, which covers the start only: the run's steps are its children, in whichever worker runs them.
 *
 * @returns the run id and its workflow's handle
 * @throws TemporalRunIdInUseError for a run id a workflow has (running or retained closed); the
 *   client's error otherwise (the span records either)
 */
export async function startRunWorkflow(
  options: TemporalRuntimeOptions,
  parts: StartParts,
  start: TemporalStartOptions,
): Promise<{ runId: string; workflow: WorkflowHandle }> {
  // Random, as in process: ids made of the clock and a counter collided across client processes.
  const runId = start.runId ?? randomUUID();
  const run: RunInput = {
    runId,
    agent: options.agent,
    messages: start.messages,
    caps: { ...parts.caps, ...start.caps },
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
      ...(options.workflowTaskTimeoutMs === undefined
        ? {}
        : { workflowTaskTimeout: options.workflowTaskTimeoutMs }),
      // What the Web UI shows: the agent and the request, the status in the memo and, with
      // `searchAttributes`, as search attributes the workflow keeps up to date (§Visibility).
      staticSummary: summary,
      memo: { [RUN_MEMO]: { status: 'running', state: 'planning', awaiting: null } satisfies RunMemo },
      ...(parts.searchAttributes
        ? {
            typedSearchAttributes: [
              { key: { name: SEARCH_ATTRIBUTES.status, type: 'KEYWORD' as const }, value: 'running' },
            ],
          }
        : {}),
      args: [workflowInput(options, parts, run, summary)],
    });
    return { runId, workflow };
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
    span.end();
  }
}

/** The workflow's input: the run, and the options the workflow reads. */
function workflowInput(
  options: TemporalRuntimeOptions,
  parts: StartParts,
  run: RunInput,
  summary: string,
): RunWorkflowInput {
  return {
    run,
    toolTimeoutsMs: parts.toolTimeoutsMs,
    visibility: { searchAttributes: parts.searchAttributes },
    summary,
    ...(options.history === undefined ? {} : { history: options.history }),
    ...(options.resultToolResults === undefined ? {} : { resultToolResults: options.resultToolResults }),
    ...(options.resultBytes === undefined ? {} : { resultBytes: options.resultBytes }),
    ...(options.heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs: options.heartbeatTimeoutMs }),
    ...(options.defaultToolTimeoutMs === undefined
      ? {}
      : { defaultToolTimeoutMs: options.defaultToolTimeoutMs }),
  };
}

/** The start summary the Web UI lists a run with: the agent and the first words of the last user message. */
function startSummary(agent: { id: string; name?: string }, messages: Message[]): string {
  const ask = messages.findLast((message) => message.role === 'user')?.content ?? '';
  const line = ask.replace(/\s+/g, ' ').trim();
  return `${agent.name ?? agent.id}: ${line.length > 120 ? `${line.slice(0, 119)}…` : line}`;
}
