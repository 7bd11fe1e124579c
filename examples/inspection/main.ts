/**
 * Live state-chart inspection of one run: `node --import tsx examples/inspection/main.ts`.
 *
 * The runtime serves the inspector page (`inspector: { port }`); the run looks a customer up,
 * then waits in `awaiting.clarification` until you answer "Which plan…?" here in the terminal
 * (or, when stdin is not a terminal, until the answer comes by itself after a few seconds).
 * Open the printed URL to watch the chart: the active states and the transition just taken are
 * highlighted, and the run's events stream into the log.
 *
 * Flags: `--port N` (default: a free port), `--answer-after MS` (non-interactive answer delay,
 * default 5000), `--exit` (stop once the run completes instead of serving until Ctrl+C).
 */
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { createRuntime, defineTool } from 'toolwarden';
import { scriptedPlanner } from 'toolwarden/testing';
import { z } from 'zod';

const { values: flags } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'answer-after': { type: 'string', default: '5000' },
    exit: { type: 'boolean', default: false },
  },
});

const lookup = defineTool({
  id: 'crm.lookup_customer',
  description: 'Find a customer by email',
  input: z.object({ email: z.email().describe('Customer email') }),
  execute: async ({ email }) => ({ email, name: 'Ada Lovelace', plan: 'free' }),
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A scripted planner stands in for an LLM; each turn takes a moment so the chart can be followed.
const planner = scriptedPlanner([
  async () => {
    await pause(800);
    return { toolCalls: [{ name: 'crm.lookup_customer', input: { email: 'ada@example.com' } }] };
  },
  async () => {
    await pause(800);
    return {
      await: {
        clarification: {
          id: 'plan',
          question: 'Ada is on the free plan. Which plan should she get: free or pro?',
          missingFields: ['plan'],
        },
      },
    };
  },
  async (input) => {
    await pause(800);
    const answer = 'clarification' in input ? input.clarification?.answer : undefined;
    return { finalResponse: { text: `Ada Lovelace is now on the ${answer ?? 'free'} plan.` } };
  },
]);

const runtime = createRuntime({
  agent: { id: 'crm-assistant', name: 'CRM assistant' },
  planner,
  tools: [lookup],
  inspector: { port: Number(flags.port), onListening: () => {} },
});
const inspector = await runtime.inspector!.start();
console.log(`Inspector: ${inspector.url}`);
console.log(`(@statelyai/inspect apps can send to ${inspector.wsUrl})\n`);

// Give the page a moment to be opened before the run starts.
await pause(1500);
const run = runtime.start({ messages: [{ role: 'user', content: 'Move ada@example.com to a paid plan' }] });

run.events$.subscribe(async (event) => {
  console.log(`  ${event.type}${event.type === 'state_changed' ? ` → ${event.state}` : ''}`);
  if (event.type !== 'await_clarification') return;
  const { id, question } = event.clarification;
  let answer = 'pro';
  if (process.stdin.isTTY) {
    const terminal = createInterface({ input: process.stdin, output: process.stdout });
    answer = (await terminal.question(`\n${question} `)).trim() || 'pro';
    terminal.close();
  } else {
    console.log(`\n${question} (answering "pro" in ${flags['answer-after']} ms)`);
    await pause(Number(flags['answer-after']));
  }
  await run.provideClarification({ id, answer });
});

const outcome = await run.result();
console.log(`\n${outcome.status}: ${outcome.finalResponse?.text ?? outcome.error?.message}`);
if (flags.exit) {
  await runtime.inspector?.close();
} else {
  console.log(`Still serving ${inspector.url} — Ctrl+C to stop.`);
  process.once('SIGINT', () => void runtime.inspector?.close());
}
