/**
 * The Web UI screenshots of docs/temporal.md §Visibility: starts a few runs (completed, failed,
 * canceled, one awaiting a person) with a worker in this process, then photographs the Temporal
 * Web UI in headless Chromium: the runs awaiting a person found by toolwarden's search attribute,
 * a run's history with the tools as activity summaries, and the awaiting run with its question.
 * Needs the dev server with its Web UI (`bash scripts/temporal.sh start --ui`) and /usr/bin/chromium.
 *
 *     node --import tsx examples/temporal/screenshots.ts [docs/images]
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { chromium } from 'playwright-core';
import { defineTool, type PlanInput, type Planner, type PlanResult, type PlanResumeInput } from 'toolwarden';
import { createTemporalWorker, temporalRuntime } from 'toolwarden/temporal';
import { z } from 'zod';

const out = process.argv[2] ?? 'docs/images';
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const ui = process.env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233';
const taskQueue = `toolwarden-ui-${randomUUID().slice(0, 8)}`;

const lookup = defineTool({
  id: 'crm.lookup',
  description: 'Finds a customer',
  input: z.object({ name: z.string() }),
  execute: ({ name }) => ({ customer: name, plan: 'basic' }),
});
const change = defineTool({
  id: 'billing.changePlan',
  description: 'Moves a customer to a plan',
  input: z.object({ customer: z.string(), plan: z.string() }),
  execute: ({ customer, plan }) => ({ customer, plan }),
});
const wait = defineTool({
  id: 'report.export',
  description: 'Exports until aborted',
  input: z.object({}),
  execute: (_input, { signal }) => new Promise((resolve) => signal.addEventListener('abort', resolve)),
});

/** The request decides: move a customer (two tools), ask which plan, export (canceled), fail. */
const planner: Planner = {
  planStart: async (input: PlanInput): Promise<PlanResult> => {
    const ask = String(input.messages.find((m) => m.role === 'user')?.content);
    if (ask.startsWith('Move')) return { toolCalls: [{ name: 'crm.lookup', input: { name: 'Ada' } }] };
    if (ask.startsWith('Upgrade')) {
      return {
        await: { clarification: { id: 'plan', question: 'Which plan should Grace move to: pro or team?' } },
      };
    }
    if (ask.startsWith('Export')) return { toolCalls: [{ name: 'report.export', input: {} }] };
    return {};
  },
  planResume: async (input: PlanResumeInput): Promise<PlanResult> => {
    const done = input.messages.filter((m) => m.role === 'tool').length;
    if (done === 1 && input.toolResults[0]?.name === 'crm.lookup') {
      return { toolCalls: [{ name: 'billing.changePlan', input: { customer: 'Ada', plan: 'pro' } }] };
    }
    return { finalResponse: { text: 'Ada is on pro now.' } };
  },
};

const worker = await createTemporalWorker({
  connection: await NativeConnection.connect({ address }),
  taskQueue,
  tools: [lookup, change, wait],
  planner,
});
const running = worker.run();
const client = new Client({ connection: await Connection.connect({ address }) });
const runtime = temporalRuntime({ client, taskQueue, agent: { id: 'support' } });
const moved = await runtime.start({ messages: [{ role: 'user', content: 'Move Ada to the pro plan' }] });
await moved.result();
const asking = await runtime.start({ messages: [{ role: 'user', content: 'Upgrade Grace' }] });
const failing = await runtime.start({ messages: [{ role: 'user', content: 'Do something impossible' }] });
await failing.result();
const exporting = await runtime.start({ messages: [{ role: 'user', content: 'Export the March report' }] });
await new Promise((resolve) => setTimeout(resolve, 1_000));
await exporting.cancel('not needed any more');
await exporting.result();
while ((await asking.status()).status !== 'awaiting')
  await new Promise((resolve) => setTimeout(resolve, 100));
await new Promise((resolve) => setTimeout(resolve, 2_000)); // visibility catches up

await mkdir(out, { recursive: true });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const shoot = async (url: string, file: string, tab?: string) => {
  // 'load', not 'networkidle': the UI keeps polling a running workflow.
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForTimeout(4_000);
  if (tab) {
    await page.getByText(tab, { exact: true }).first().click();
    await page.waitForTimeout(1_500);
  }
  await page.screenshot({ path: join(out, file) });
  console.log(`${join(out, file)} ← ${url}`);
};
const list = (query: string) => `${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`;
// Runs toolwarden canceled or failed: Temporal says Completed, the search attribute says what they were.
await shoot(
  list(`TaskQueue = '${taskQueue}' AND ToolwardenStatus IN ('failed', 'canceled')`),
  'temporal-ui-failed-canceled.png',
);
await shoot(
  list(`ToolwardenAwaiting = 'clarification' AND TaskQueue = '${taskQueue}'`),
  'temporal-ui-awaiting.png',
);
const history = async (runId: string) => {
  const { runId: executionId } = await client.workflow.getHandle(runId).describe();
  return `${ui}/namespaces/default/workflows/${runId}/${executionId}/history`;
};
await shoot(await history(moved.runId), 'temporal-ui-history.png', 'User Metadata');
await shoot(await history(asking.runId), 'temporal-ui-awaiting-run.png', 'User Metadata');
await browser.close();

await asking.provideClarification({ id: 'plan', answer: 'pro' });
await asking.result();
worker.shutdown();
await running;
await client.connection.close();
