/**
 * The options of `temporalRuntime` (docs/temporal.md §Client).
 *
 * @module
 */
import type { TracerProvider } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { Caps } from '../run/caps.ts';
import type { Tool } from '../tools/define-tool.ts';
import type { PayloadStore } from './payload-store.ts';

/** Options of `temporalRuntime`. */
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
   * Temporal's workflow task timeout for the run's workflow, ms (WorkflowOptions'
   * `workflowTaskTimeout`; default: the server's, 10 s). A validation or review step (a local
   * activity) that runs past 80% of it makes the worker heartbeat the workflow task: the history
   * gains a task of its own, which the continue-as-new limits count like any other.
   */
  workflowTaskTimeoutMs?: number;
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
