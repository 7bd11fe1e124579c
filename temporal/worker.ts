import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TracerProvider } from '@opentelemetry/api';
import type { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import type { Plugin } from '../plugins/define-plugin.ts';
import type { Policy } from '../policies/define-policy.ts';
import { createPolicyEngine } from '../policies/policy-engine.ts';
import { noPolicies } from '../policies/policy-runner.ts';
import { requireOptionalPeers } from '../run/optional-peers.ts';
import type { Planner } from '../run/planner.ts';
import type { Tool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { createActivities } from './activities.ts';
import { type PayloadOptions, Payloads } from './payload-store.ts';
import { TranscriptCache } from './transcript-cache.ts';

/** Options of {@link createTemporalWorker}. */
export interface TemporalWorkerOptions {
  /** A `NativeConnection` to the Temporal frontend (`NativeConnection.connect({ address })`). */
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  tools?: Tool[];
  planner: Planner;
  policies?: Policy[];
  /** Plugins whose tools, policies and `wrapToolCall` hooks the activities use. */
  plugins?: Plugin[];
  /** For tools without `timeoutMs`, ms. Default 60 000. */
  defaultToolTimeoutMs?: number;
  /**
   * Extra time the finalizing turn gets after the time budget ran out, ms. Default: a tenth of
   * the run's `timeBudgetMs`, at least 1 000 and at most 30 000 (the default 300 s budget: 30 000).
   */
  finalizeGraceMs?: number;
  /** Where the `plan` and `execute_tool` spans of the activities go. Default: the global provider. */
  tracerProvider?: TracerProvider;
  /**
   * Runs whose transcripts the worker keeps between planner turns (docs/temporal.md §History).
   * A turn of a run not kept reads its transcript from the workflow by query. Default 256.
   */
  transcriptCacheRuns?: number;
  /**
   * Large tool results by reference (docs/temporal.md §History): results over `inlineBytes`
   * (16 KB) go to `store`, which every worker (and a client reading results) must share; without
   * a store, a result over `maxInlineBytes` (256 KB) becomes a `PayloadTooLargeError` result.
   */
  payloads?: PayloadOptions;
  /**
   * Options handed to `Worker.create` as they are: concurrency (`maxConcurrentActivityTaskExecutions`,
   * `maxCachedWorkflows`, …), `identity`, `interceptors`, a prebuilt `workflowBundle`
   * (`toolwarden temporal bundle`, docs/temporal.md §Worker: no webpack at start), `shutdownGraceTime`.
   * What toolwarden sets itself (connection, namespace, task queue, activities) is not overridden.
   * Defaults that differ from the SDK's: `maxHeartbeatThrottleInterval` 1 s (a cancel reaches a
   * running step within about a second) and `stickyQueueScheduleToStartTimeout` 3 s (a run whose
   * worker died moves to another worker sooner: docs/temporal.md §Crashes and cancel).
   */
  worker?: Omit<Partial<WorkerOptions>, 'connection' | 'namespace' | 'taskQueue' | 'activities'>;
}

/** The Worker options `createTemporalWorker` sets unless `worker` sets them (see `TemporalWorkerOptions.worker`). */
export const WORKER_DEFAULTS = {
  maxHeartbeatThrottleInterval: '1 second',
  stickyQueueScheduleToStartTimeout: '3 seconds',
} as const satisfies Partial<WorkerOptions>;

/**
 * The workflow module the worker bundles: `temporal/workflows.ts` in a checkout,
 * `dist/temporal/workflows.js` in the package (a build entry point of its own; this code may sit
 * in a shared chunk of `dist/`, so both places are looked at).
 */
export const WORKFLOWS_PATH = ((): string => {
  const candidates = import.meta.url.endsWith('.ts')
    ? ['./workflows.ts']
    : ['./workflows.js', './temporal/workflows.js', '../temporal/workflows.js'];
  const paths = candidates.map((candidate) => fileURLToPath(new URL(candidate, import.meta.url)));
  return paths.find((path) => existsSync(path)) ?? paths[0]!;
})();

/**
 * A Temporal worker that runs toolwarden runs (issue 14, docs/temporal.md §Worker): it bundles the
 * run workflow (the run machine) and registers the machine's steps as activities over these
 * tools, planner, policies and plugins. `await worker.run()` polls until `worker.shutdown()`.
 *
 * @throws MissingPeerError naming the `npm install` line when `@temporalio/worker`, `-workflow` or
 *   `-activity` is not installed (optional peers, docs/packaging.md); whatever `Worker.create`
 *   throws (an unreachable server, a workflow bundle that fails).
 */
export async function createTemporalWorker(options: TemporalWorkerOptions): Promise<Worker> {
  requireOptionalPeers('toolwarden/temporal createTemporalWorker', {
    '@temporalio/worker': '^1.24.0',
    '@temporalio/workflow': '^1.24.0',
    '@temporalio/activity': '^1.24.0',
  });
  const { Worker } = await import('@temporalio/worker');
  const plugins = options.plugins ?? [];
  const catalog = new ToolCatalog([
    ...(options.tools ?? []),
    ...plugins.flatMap((plugin) => plugin.tools ?? []),
  ]);
  const policies = [...(options.policies ?? []), ...plugins.flatMap((plugin) => plugin.policies ?? [])];
  const activities = createActivities(
    {
      catalog,
      planner: options.planner,
      policies: policies.length > 0 ? createPolicyEngine({ policies, tools: catalog }) : noPolicies,
      plugins,
      defaultToolTimeoutMs: options.defaultToolTimeoutMs,
      finalizeGraceMs: options.finalizeGraceMs,
    },
    options.tracerProvider,
    new TranscriptCache(options.transcriptCacheRuns),
    new Payloads(options.payloads),
  );
  const extra = options.worker ?? {};
  return Worker.create({
    ...WORKER_DEFAULTS,
    // A prebuilt bundle replaces the path (the SDK takes one or the other).
    ...(extra.workflowBundle ? {} : { workflowsPath: WORKFLOWS_PATH }),
    ...extra,
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities,
  });
}
