/**
 * Step 1 of `createRuntime` (options): what it takes, and the settings every later step reads,
 * resolved once with their defaults.
 *
 * @module
 */

import type { InspectionEvent, Observer } from 'xstate';
import type { Plugin, RunInfo } from '../plugins/define-plugin.ts';
import type { Policy } from '../policies/define-policy.ts';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import { type Caps, CapsSchema, DEFAULT_CAPS } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { Planner } from '../run/planner.ts';
import type { RunStore } from '../stores/run-store.ts';
import {
  TELEMETRY_PLUGIN_NAME,
  type TelemetryPluginOptions,
  telemetryPlugin,
} from '../telemetry/telemetry-plugin.ts';
import type { Tool } from '../tools/define-tool.ts';
import type { ParseLimits } from '../tools/parse-arguments.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { type ToolSource, toolSourceOf } from '../tools/tool-source.ts';
import type { DurableOptions } from './durable/durable-runs.ts';
import type { ApprovalOptions } from './steps/remembered-approvals.ts';

/** An XState inspection observer: an `Observer` or a plain function. */
export type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** Where errors the runtime cannot hand to a caller go. */
export type OnRuntimeError = (error: unknown, where: string) => void;

/**
 * What the runtime's core takes (docs/architecture.md); the public `createRuntime` (create-runtime.ts at
 * the root) adds `inspector`.
 */
export interface CoreRuntimeOptions {
  agent: { id: string; name?: string };
  planner: Planner;
  tools?: Tool[];
  plugins?: Plugin[];
  /** Configured ceilings; each run may lower them, policies may only tighten them. */
  caps?: Partial<Caps>;
  /**
   * Policies (docs/policies.md), consulted in this order, then each plugin's in plugin order.
   * Default (none given, no `policyRunner`): `defaultPolicies()`; `[]` for none. Built into the
   * policy engine (`createPolicyEngine`) over this runtime's tools.
   */
  policies?: Policy[];
  /** A policy engine of your own instead of `policies` (the port the run machine calls). */
  policyRunner?: PolicyRunner;
  /**
   * Where runs are persisted at every step boundary (docs/durability.md). Default: in memory
   * (`memoryStore()`); `sqliteStore({ path })` makes runs survive a restart, `postgresStore` lets
   * several processes share them.
   */
  store?: RunStore;
  /** Leases, eviction of waiting runs, write retries (runtime/durable). */
  durable?: DurableOptions;
  /** An XState inspection observer that reaches every actor (e.g. `@statelyai/inspect`). */
  inspect?: InspectObserver;
  /**
   * Keep each step's snapshot of the most recent runs in memory, so `runtime.fork` can start a
   * run from any of them (run-fork.ts): `true` (100 runs), `{ maxRuns }`, or false. Default: off;
   * on with the public `createRuntime`'s `inspector` option (its page forks runs). A kept run costs
   * its steps' snapshots: ~80 KB of heap for a run of 30 tool calls (61 steps; Node 24, heap after GC
   * over 300 such runs, 2026-12-01), so `maxRuns: 10_000` of them holds ~0.8 GB.
   */
  forks?: boolean | { maxRuns?: number };
  /** Timeout for tools that declare none, in ms. Default 60 000. */
  defaultToolTimeoutMs?: number;
  /** Limits on tool arguments (bytes, nesting depth). */
  limits?: ParseLimits;
  /**
   * Time the finalizing turn gets past the time budget (or past when finalizing began, if later),
   * in ms: how long a planner that does not answer can keep a run going after its budget.
   * Default: bounded by the run's budget, a tenth of its `timeBudgetMs`, at least 1 000 and at
   * most 30 000 (a 5 s budget: 1 s; the default 300 s budget: 30 s). A number given here is used
   * as it is, whatever the budget.
   */
  finalizeGraceMs?: number;
  /** Where errors the runtime cannot hand to a caller go (a store write failing, a plugin hook throwing). */
  onError?: OnRuntimeError;
  /**
   * Approvals (docs/policies.md §Sticky approvals, §Mixed batches): `rememberHighRisk` (default
   * false: a `high` risk call always asks, a `remember` on it is ignored) and `runUnapproved`
   * (`wait`, default, or `parallel`: a batch's calls that need no approval run first while the
   * others wait).
   */
  approvals?: ApprovalOptions;
  /**
   * Traces and metrics (docs/telemetry.md) through `@opentelemetry/api`, by the telemetry plugin installed
   * first (outermost) unless `plugins` has one: on by default, a no-op until an SDK is registered;
   * `false` turns it off.
   */
  telemetry?: TelemetryPluginOptions | false;
}

/** What `runtime.start` takes. */
export interface StartOptions {
  /** Default: a random UUID. Non-empty, no NUL, at most the store's `maxRunIdBytes` (512) UTF-8 bytes. */
  runId?: string;
  /** Same rules as `runId`. */
  sessionId?: string;
  messages: Message[];
  /** Strings only, in a plain object; `__proto__` and `constructor` are refused (StartOptionsError). */
  labels?: Record<string, string>;
  /** Per-run caps: never above the runtime's. */
  caps?: Partial<Caps>;
  /** Tools the app disables for this run; no policy can enable them. */
  disabledTools?: string[];
  /**
   * The user's scopes (`['payments:refund']`): a call of a tool whose `permissions` are not all
   * here is refused (`permission_denied`) unless a policy sends it for approval
   * (docs/policies.md §Permissions and risk). Non-empty strings of at most 256 characters.
   */
  grants?: string[];
}

/** {@link RuntimeOptions} with defaults applied: what the later steps of `createRuntime` read. */
export interface RuntimeSettings {
  agent: RunInfo['agent'];
  /** Telemetry first (unless off or placed by the app), then the app's plugins (the inspector's last). */
  plugins: Plugin[];
  /** The runtime's tools and its plugins' tools. @throws ToolDefinitionError on a duplicate id. */
  catalog: ToolCatalog;
  /** The runtime's caps: each run's are clamped to them. */
  ceilings: Caps;
  onError: OnRuntimeError;
}

/**
 * Applies the defaults of {@link RuntimeOptions}: plugins in hook order, the tool catalog, the caps.
 *
 * @throws ToolDefinitionError when two tools share an id; ZodError for invalid caps.
 */
export function resolveRuntimeOptions(options: CoreRuntimeOptions): RuntimeSettings {
  const plugins = withTelemetry(options.plugins ?? [], options.telemetry);
  const catalog = new ToolCatalog(
    withoutServerCollisions([...(options.tools ?? []), ...plugins.flatMap((plugin) => plugin.tools ?? [])]),
  );
  followToolSources(catalog);
  return {
    agent: { id: options.agent.id, name: options.agent.name ?? options.agent.id },
    plugins,
    catalog,
    ceilings: CapsSchema.parse({ ...DEFAULT_CAPS, ...options.caps }),
    onError: options.onError ?? ((error, where) => console.error(`[toolwarden] ${where}:`, error)),
  };
}

/**
 * The tools less those an MCP server offers (tagged `mcp`, docs/mcp.md §Client) under an id a
 * tool of the app's own already has, or an earlier server tool: each is skipped with a warning,
 * so a server's new tool cannot make `createRuntime` throw (issue 39 item 4). Two of the app's
 * own tools with one id still throw (`ToolCatalog`).
 */
function withoutServerCollisions(tools: Tool[]): Tool[] {
  const fromServer = (tool: Tool) => tool.tags?.includes('mcp') === true;
  const taken = new Set(tools.filter((tool) => !fromServer(tool)).map((tool) => tool.id));
  return tools.filter((tool) => {
    if (!fromServer(tool)) return true;
    if (!taken.has(tool.id)) {
      taken.add(tool.id);
      return true;
    }
    console.warn(`[toolwarden] MCP tool ${tool.id} skipped: another tool of this runtime has that id`);
    return false;
  });
}

/**
 * Keeps the catalog's tools from each {@link ToolSource} (an MCP server's list, which
 * `notifications/tools/list_changed` renews) as the source lists them now: its old tools are
 * removed and its new ones added, a new one whose id another tool has skipped with a warning.
 * The next planner turn is offered the new list. The source holds the catalog weakly: a runtime
 * dropped without `close()` is not kept alive by a long-lived toolset.
 */
function followToolSources(catalog: ToolCatalog): void {
  const sources = new Set<ToolSource>();
  for (const tool of catalog.list()) {
    const source = toolSourceOf(tool);
    if (source !== undefined) sources.add(source);
  }
  const held = new WeakRef(catalog);
  for (const source of sources) {
    let current = catalog.list().filter((tool) => toolSourceOf(tool) === source);
    const unsubscribe = source.subscribe(() => {
      const live = held.deref();
      if (live === undefined) return unsubscribe();
      for (const tool of current) live.remove(tool);
      current = [];
      for (const tool of source.tools) {
        if (live.has(tool.id)) {
          console.warn(`[toolwarden] MCP tool ${tool.id} skipped: another tool of this runtime has that id`);
          continue;
        }
        live.add(tool);
        current.push(tool);
      }
    });
  }
}

/** The app's plugins, after the telemetry plugin unless telemetry is off or the app placed one itself. */
function withTelemetry(plugins: Plugin[], telemetry: TelemetryPluginOptions | false | undefined): Plugin[] {
  if (telemetry === false || plugins.some((plugin) => plugin.name === TELEMETRY_PLUGIN_NAME)) return plugins;
  return [telemetryPlugin(telemetry), ...plugins];
}
