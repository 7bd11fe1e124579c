import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import { demoLookupTool, demoPlanner } from './demo-agent.ts';
import { type InspectorPlugin, inspectorPlugin } from './inspector-plugin.ts';
import type { InspectorServer } from './inspector-server.ts';

/** `toolwarden inspect` — one line for the command list. */
export const INSPECT_DESCRIPTION = 'Serve the live state-chart inspector on 127.0.0.1 (with a demo agent)';

/** `toolwarden inspect --help`, after the options commander lists. */
export const INSPECT_HELP = `
Serves a local page (127.0.0.1 only; the printed URL carries a random token, requests without
it get 403) that draws the run machine, lists live and recent runs, highlights each run's
active states and the transition just taken, and shows its event log, live over Server-Sent
Events. It works offline: nothing is loaded from the network.

With no app attached, a demo agent runs so there is something to watch: a scripted planner
looks a customer up (crm.lookup_customer), asks a clarification ("Which plan…?"), waits in
awaiting.clarification, is answered automatically after --answer-after ms, and completes; a new
demo run starts every --every ms. Pass --no-demo to serve an empty chart.

In your app, inspect your own runs with createRuntime({ inspector: true }) (or { port }), or
plugins: [inspectorPlugin()]. Apps wired to @statelyai/inspect can point
createWebSocketInspector({ url }) at the ws:// URL printed here.
`;

export interface InspectCommandOptions {
  /** Default 0: a free port. */
  port?: number;
  host?: string;
  /** Run the demo agent (default true). */
  demo?: boolean;
  /** The demo answers its clarification after this long, ms. Default 4000. */
  answerAfterMs?: number;
  /** A new demo run starts this long after the previous one started, ms. Default 15 000. */
  everyMs?: number;
  /** Demo planner turn duration, ms. Default 600. */
  turnMs?: number;
  /** Where the URL and notes go. Default: stdout. */
  print?: (line: string) => void;
}

export interface InspectSession {
  url: string;
  wsUrl: string;
  server: InspectorServer;
  inspector: InspectorPlugin;
  runtime: Runtime;
  /** Stops the demo and the server. */
  close(): Promise<void>;
}

/**
 * `toolwarden inspect` as a function (issue 8 §3): serves the inspector and, unless
 * `demo: false`, keeps a demo agent running. Resolves once the page is served; the server
 * keeps the process alive until `close()`.
 */
export async function inspectCommand(options: InspectCommandOptions = {}): Promise<InspectSession> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const inspector = inspectorPlugin({ port: options.port ?? 0, host: options.host, onListening: () => {} });
  const runtime = createRuntime({
    agent: { id: 'demo', name: 'Demo agent' },
    planner: demoPlanner({ delayMs: options.turnMs }),
    tools: [demoLookupTool],
    plugins: [inspector],
  });
  const server = await inspector.start();
  print(`toolwarden inspector: ${server.url}`);
  print(`@statelyai/inspect WebSocket: ${server.wsUrl}`);

  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, work: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      work();
    }, ms);
    timers.add(timer);
  };
  let stopped = false;
  const startDemoRun = () => {
    if (stopped) return;
    const run = runtime.start({
      messages: [{ role: 'user', content: 'Move ada@example.com to a paid plan' }],
      labels: { demo: 'true' },
    });
    run.events$.subscribe((event) => {
      if (event.type !== 'await_clarification') return;
      later(options.answerAfterMs ?? 4000, () => {
        run.provideClarification({ id: event.clarification.id, answer: 'pro' }).catch(() => undefined);
      });
    });
    later(options.everyMs ?? 15_000, startDemoRun);
  };
  if (options.demo !== false) {
    print('A demo agent is running (a scripted planner that asks a clarification). Ctrl+C stops.');
    startDemoRun();
  }

  return {
    url: server.url,
    wsUrl: server.wsUrl,
    server,
    inspector,
    runtime,
    async close() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await inspector.close();
    },
  };
}
