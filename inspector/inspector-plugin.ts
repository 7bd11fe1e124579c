import type { AnyStateMachine } from 'xstate';
import { type GraphModel, toGraphModel } from '../machines/diagram/graph-model.ts';
import { definePlugin, type Plugin } from '../plugins/define-plugin.ts';
import type { RunEvent } from '../run/run-events.ts';
import { migrateSnapshot } from '../runtime/durable/snapshot-migration.ts';
import { InspectionStore } from './inspection-store.ts';
import type { InspectorAnswers, InspectorServer, InspectorServerOptions } from './inspector-server.ts';
import type { Sanitize } from './sanitize.ts';

/** Charts laid out in this process, by graph: ELK takes a second or two on the run machine. */
const charts = new Map<string, Promise<string>>();

/** What `inspectorPlugin` and the runtime's `inspector: { … }` option take. */
export interface InspectorPluginOptions
  extends Pick<
    InspectorServerOptions,
    | 'port'
    | 'host'
    | 'token'
    | 'readOnly'
    | 'jaegerUrl'
    | 'maxSseClients'
    | 'maxSseBufferedBytes'
    | 'pageSize'
    | 'logPageSize'
  > {
  /** The machine the page draws. Default: the run machine. */
  machine?: AnyStateMachine;
  /** Applied to contexts and event payloads before they are shown. Default: `defaultSanitize`. */
  sanitize?: Sanitize;
  /**
   * Runs kept (live and recent). Default 100. A kept run costs its log and snapshots: ~130 KB of
   * heap for a run of 30 tool calls with the default `maxLog` (Node 24, heap after GC over 300 such
   * runs, 2026-12-01; issue 38 saw ~87 KB a run at 10,000 runs in Chromium's session), so
   * `maxRuns: 10_000` holds about 0.9–1.3 GB. The runtime's `forks` (on with the inspector) keep
   * ~80 KB more for each of their own `maxRuns` (100 by default).
   */
  maxRuns?: number;
  /** Log entries kept per run. Default 1000. */
  maxLog?: number;
  /** Start the server at once (default true); when false, it starts on the first `start()`. */
  serve?: boolean;
  /**
   * Called once the page is served. Default: prints the address on stderr without the access
   * token (logs are read by more people than the page should be); `printUrl` prints the URL
   * with its token instead. The URL: `(await inspector.start()).url`.
   */
  onListening?: (server: InspectorServer) => void;
  /** Print the page's URL with its access token on stderr when it is served. Default false. */
  printUrl?: boolean;
}

/** The inspector as a plugin: an inspection observer, an `onEvent` hook, a server. */
export interface InspectorPlugin extends Plugin {
  readonly store: InspectionStore;
  /** Starts serving (once) and resolves with the server: its `url` carries the token. */
  start(): Promise<InspectorServer>;
  /** Stops serving; what was recorded stays in `store`. */
  close(): Promise<void>;
  /**
   * Lets the page answer waiting runs through `answers` (the runtime: `createRuntime` calls
   * this for the inspector it hosts). Until then, or with `readOnly`, the page only shows what
   * runs await.
   */
  answerWith(answers: InspectorAnswers): void;
  /**
   * Resolves when the runs waiting in the runtime's store that the inspector did not host have
   * been listed (the approval desk, docs/inspection.md §Approval desk): after `start()` and after
   * each page connects. Resolves with how many were added by the latest listing.
   */
  seeded(): Promise<number>;
}

/**
 * The live state-chart inspector (issue 8 §3) as a plugin on the public hooks: `inspect` feeds
 * XState inspection events (microsteps → the transition taken, snapshots → active states) and
 * `onEvent` the run's RunEvents into an {@link InspectionStore}; the server (loaded on start,
 * so hono, ws and elkjs cost nothing until then) serves the page.
 *
 * ```ts
 * const inspector = inspectorPlugin({ port: 0 });
 * const runtime = createRuntime({ agent, planner, plugins: [inspector] });
 * console.log((await inspector.start()).url); // http://127.0.0.1:PORT/?token=…
 * ```
 *
 * With none installed, the runtime installs no observer at all (zero cost when off).
 */
export function inspectorPlugin(options: InspectorPluginOptions = {}): InspectorPlugin {
  const graph = toGraphModel(options.machine);
  const store = new InspectionStore({
    graph,
    sanitize: options.sanitize,
    maxRuns: options.maxRuns,
    maxLog: options.maxLog,
  });
  let started: Promise<InspectorServer> | undefined;
  let closed = false;
  // Read by the server at each answer: the runtime attaches after the plugin (and its server) exist.
  let answers: InspectorAnswers | undefined;
  const answering: InspectorAnswers = {
    provideClarification: (runId, answer) => need().provideClarification(runId, answer),
    provideToolResults: (runId, results) => need().provideToolResults(runId, results),
    confirm: (runId, answer) => need().confirm(runId, answer),
    resolveInDoubt: (runId, resolutions) => {
      const runtime = need();
      if (!runtime.resolveInDoubt) throw new Error('this runtime cannot resolve calls in doubt');
      return runtime.resolveInDoubt(runId, resolutions);
    },
    load: (runId) => {
      const runtime = need();
      if (!runtime.load) throw new Error('this runtime cannot load stored runs');
      return runtime.load(runId);
    },
    events: (runId, options) => {
      const runtime = need();
      if (!runtime.events) throw new Error('this runtime has no event log');
      return runtime.events(runId, options);
    },
    fork: (runId, fork) => {
      const runtime = need();
      if (!runtime.fork) throw new Error('this runtime cannot fork runs');
      return runtime.fork(runId, fork);
    },
  };
  const need = () => {
    if (!answers) throw new Error('this inspector is not attached to a runtime: it cannot answer runs');
    return answers;
  };
  const onListening = options.onListening ?? (options.printUrl ? printUrl : printAddress);
  const desk = approvalDesk(store, () => answers);

  const start = (): Promise<InspectorServer> => {
    started ??= (async () => {
      const [{ startInspectorServer }, { toSvg }, { toSimpleGraph }] = await Promise.all([
        import('./inspector-server.ts').catch(missingPeers),
        import('../machines/diagram/svg.ts'),
        import('../machines/diagram/simple-graph.ts'),
      ]);
      const simple = toSimpleGraph(graph);
      const chart = (which: string, draw: () => Promise<string>) => {
        const key = `${which}:${JSON.stringify(graph)}`;
        let svg = charts.get(key);
        if (!svg) {
          svg = draw();
          charts.set(key, svg);
          svg.catch(() => charts.delete(key));
        }
        return svg;
      };
      const [full, simpleSvg] = await Promise.all([
        // Edge labels float (on hover, on the edge taken, zoomed in): laid out with them the chart
        // was 2370×2364 and its text 4.9 px at fit on a 1600×1000 window; without, 978×1634.
        chart('full', () => toSvg(graph, { embedStyle: false, className: 'full', edgeLabels: 'float' })),
        chart('simple', () =>
          toSvg(simple.graph, {
            embedStyle: false,
            edgeLabels: 'float',
            stateFontSize: 16,
            details: false,
            markTransient: false,
            className: 'simple',
            title: `${graph.machineId} state machine (simple view)`,
          }),
        ),
      ]);
      const server = await startInspectorServer({
        store,
        svg: full,
        simple: {
          svg: simpleSvg,
          via: simple.via,
          shownAs: simple.shownAs,
          wayLabels: wayLabelsOf(graph, simple.via),
        },
        answers: answering,
        readOnly: options.readOnly === true,
        ...(options.jaegerUrl === undefined ? {} : { jaegerUrl: options.jaegerUrl }),
        port: options.port,
        host: options.host,
        token: options.token,
        maxSseClients: options.maxSseClients,
        maxSseBufferedBytes: options.maxSseBufferedBytes,
        pageSize: options.pageSize,
        logPageSize: options.logPageSize,
        onClient: desk.refresh,
      });
      if (closed) {
        await server.close();
        throw new Error('The inspector was closed before it started');
      }
      onListening(server);
      desk.refresh();
      return server;
    })();
    return started;
  };

  const plugin = definePlugin({
    name: 'inspector',
    inspect: (event) => store.observe(event),
    onEvent: (event, run) => store.recordRunEvent(event, run.agent.id),
  });
  if (options.serve !== false) {
    start().catch((err) => process.stderr.write(`[toolwarden] inspector did not start: ${String(err)}\n`));
  }
  return Object.assign(plugin, {
    store,
    start,
    answerWith(runtime: InspectorAnswers) {
      answers = runtime;
      if (started) desk.refresh();
    },
    seeded: () => desk.settled(),
    async close() {
      closed = true;
      const server = await started?.catch(() => undefined);
      await server?.close();
    },
  });
}

/** How often the desk lists the store's waiting runs at most (a page connecting asks), ms. */
const DESK_REFRESH_MS = 2_000;

/**
 * The approval desk (issue 35 item 6): the runs waiting in the runtime's store that this
 * inspector does not host — from before a restart, hosted by a process that is gone, or evicted
 * from the inspection store — read from the store (`runtime.list({ awaiting: true })`, without
 * restoring them) with their events, and added to the inspection store, so the page lists them
 * and its forms answer them (`runtime.confirm` & co. restore a run as needed). Listed when the
 * server starts and, at most every {@link DESK_REFRESH_MS}, when a page connects.
 */
function approvalDesk(store: InspectionStore, runtime: () => InspectorAnswers | undefined) {
  let latest: Promise<number> = Promise.resolve(0);
  let last = Number.NEGATIVE_INFINITY;
  const list = async (answers: InspectorAnswers): Promise<number> => {
    const waiting = (await answers.list?.({ awaiting: true })) ?? [];
    let added = 0;
    for (const stored of waiting) {
      if (store.summary(stored.runId) || !answers.events) continue;
      const events: RunEvent[] = [];
      for await (const record of answers.events(stored.runId, { follow: false })) events.push(record.event);
      let snapshot: { value?: unknown; context?: unknown } = {};
      try {
        snapshot = migrateSnapshot(stored.snapshot);
      } catch {
        // Listed with its log, without its state: answering it reports why it cannot restore.
      }
      if (store.addStoredRun({ runId: stored.runId, agentId: stored.agentId, snapshot }, events)) added++;
    }
    return added;
  };
  return {
    refresh(): void {
      const answers = runtime();
      if (!answers?.list || Date.now() - last < DESK_REFRESH_MS) return;
      last = Date.now();
      latest = latest.then(() =>
        list(answers).catch((error) => {
          process.stderr.write(
            `[toolwarden] inspector: the store's waiting runs were not listed: ${String(error)}\n`,
          );
          return 0;
        }),
      );
    },
    settled: () => latest,
  };
}

/**
 * What decided each way a simple-view arrow stands for, aligned with `via`: its guards, or its
 * event when no guard did (`planInvalid`; `plan.error`). The page labels a taken arrow with the
 * way taken, not with the arrow's summary (issue 27 item 2: a planner that threw showed
 * `planInvalid`).
 */
export function wayLabelsOf(graph: GraphModel, via: Record<string, string[][]>): Record<string, string[]> {
  const edges = new Map(graph.edges.map((edge) => [edge.id, edge]));
  return Object.fromEntries(
    Object.entries(via).map(([id, ways]) => [
      id,
      ways.map((way) => {
        const guards = way.flatMap((edgeId) => edges.get(edgeId)?.guard ?? []);
        return guards.length > 0 ? guards.join(' → ') : (edges.get(way[0] ?? '')?.label ?? '');
      }),
    ]),
  );
}

function printUrl(server: InspectorServer): void {
  process.stderr.write(`[toolwarden] inspector: ${server.url}\n`);
}

function printAddress(server: InspectorServer): void {
  const address = new URL(server.url);
  address.search = '';
  process.stderr.write(
    `[toolwarden] inspector listening on ${address.href} (its URL with the access token: (await runtime.inspector.start()).url, or the printUrl option)\n`,
  );
}

/** The server's packages are optional peers of the package: name them instead of ERR_MODULE_NOT_FOUND. */
function missingPeers(error: unknown): never {
  if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
  throw new Error(
    "The inspector page needs optional peer dependencies: npm install 'hono@^4.13.19' '@hono/node-server@^2.1.8' 'ws@^8.23.0' 'elkjs@^0.12.1'",
    { cause: error },
  );
}
