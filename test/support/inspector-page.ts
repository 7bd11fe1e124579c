import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../create-runtime.ts';
import type { InspectorPluginOptions } from '../../inspector/inspector-plugin.ts';
import type { InspectorServer } from '../../inspector/inspector-server.ts';
import { launchChromium } from './chromium.ts';

export interface InspectorPageOptions {
  /** The runtime (telemetry off); its inspector listens on 127.0.0.1, port 0, quietly. */
  runtime: Omit<RuntimeOptions, 'inspector' | 'telemetry'>;
  /** More inspector options: `readOnly`, `maxRuns`, `pageSize`, … */
  inspector?: InspectorPluginOptions;
  /** Before the page loads (runs it should find there). */
  before?: (runtime: Runtime) => Promise<unknown>;
  /** Before the page loads, on the page (routes, init scripts, CDP). */
  prepare?: (page: Page) => Promise<unknown>;
  /** Default 1280×800. */
  viewport?: { width: number; height: number };
  /** Playwright's default timeout on the page, ms. Default 8,000. */
  timeout?: number;
  /** Wait until the page's event stream is open. Default true. */
  live?: boolean;
}

export interface InspectorPage {
  runtime: Runtime;
  server: InspectorServer;
  page: Page;
  /** Errors thrown in the page and logged to its console, but for `failedLoads`. */
  problems: string[];
  /** What the console said of requests that failed ("Failed to load resource": a refused answer, which the page shows). */
  failedLoads: string[];
  /** Every URL the page asked for. */
  requests: string[];
}

/**
 * The inspector page in Debian's Chromium, for the e2e suites (call it inside their `describe`):
 * one browser for the suite; `open` creates a runtime with the inspector, starts its server and
 * loads the page in a new tab; the runtimes and tabs a test opened are closed after it.
 */
export function inspectorPages(): {
  open(options: InspectorPageOptions): Promise<InspectorPage>;
  browser(): Browser;
} {
  let browser: Browser | undefined;
  const opened: { runtime: Runtime; page?: Page }[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterEach(async () => {
    for (const { runtime, page } of opened.splice(0)) {
      await page?.close();
      await runtime.inspector?.close();
      await runtime.close();
    }
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    browser: () => browser!,
    async open(options) {
      const runtime = createRuntime({
        ...options.runtime,
        telemetry: false,
        inspector: { port: 0, onListening: () => {}, ...options.inspector },
      });
      const entry: { runtime: Runtime; page?: Page } = { runtime };
      opened.push(entry);
      await options.before?.(runtime);
      const server = await runtime.inspector!.start();
      const page = await browser!.newPage({ viewport: options.viewport ?? { width: 1280, height: 800 } });
      entry.page = page;
      page.setDefaultTimeout(options.timeout ?? 8_000);
      const problems: string[] = [];
      const failedLoads: string[] = [];
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('pageerror', (error) => problems.push(String(error)));
      page.on('console', (message) => {
        if (message.type() !== 'error') return;
        (message.text().startsWith('Failed to load resource') ? failedLoads : problems).push(message.text());
      });
      await options.prepare?.(page);
      await page.goto(server.url);
      if (options.live !== false) await page.waitForSelector('#connection[data-state="open"]');
      return { runtime, server, page, problems, failedLoads, requests };
    },
  };
}
