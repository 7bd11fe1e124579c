/**
 * The write guard in a run, end to end: `npx tsx examples/policy-plugin/main.ts`.
 *
 * A scripted planner (standing in for an LLM) makes every mistake the guard handles: bad
 * arguments twice, a rate limit, then a malformed response from a bulk import. Each event of the
 * run is printed; the policy decisions show what the guard did and why.
 */

import { createRuntime } from 'toolwarden';
import { scriptedPlanner } from 'toolwarden/testing';
import { crmTools } from './crm-tools.ts';
import { writeGuard } from './write-guard.ts';

const { tools, writes } = crmTools({ upsert: ['rate_limited', 'ok'], import: ['malformed'] });

const planner = scriptedPlanner([
  // 1. Bad arguments: not an email, and a plan that does not exist.
  { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada', plan: 'gold' } }] },
  // 2. The next turn is restricted to crm.upsert_profile; the planner half-fixes it.
  (input) => {
    console.log(`   planner sees tools: ${input.tools.map((tool) => tool.name).join(', ')}`);
    return { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com' } }] };
  },
  // 3. Fixed, but the CRM says 429: the guard waits before the next turn.
  { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
  // 4. The retry succeeds; then a bulk import returns garbage.
  { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
  { toolCalls: [{ name: 'crm.bulk_import', input: { rows: [{ email: 'bob@example.com', plan: 'free' }] } }] },
  // 5. crm.bulk_import is gone from the tools; the planner wraps up.
  (input) => {
    console.log(`   planner sees tools: ${input.tools.map((tool) => tool.name).join(', ')}`);
    return { finalResponse: { text: 'Ada is on pro. The bulk import failed and was not retried.' } };
  },
]);

const runtime = createRuntime({
  agent: { id: 'crm-assistant', name: 'CRM assistant' },
  planner,
  tools,
  plugins: [writeGuard({ maxRetries: 2, backoff: { baseMs: 100, maxWaits: 3 } })],
});

const run = runtime.start({
  messages: [{ role: 'user', content: 'Put ada@example.com on pro and import bob' }],
});
run.events$.subscribe((event) => {
  if (event.type === 'state_changed') console.log(`state: ${event.state}`);
  if (event.type === 'retry_hint') console.log(`   hint: ${event.hint.reason} on ${event.hint.tool}`);
  if (event.type === 'policy_decision') {
    console.log(
      `   policy ${event.decision.policy}: ${event.decision.kinds.join(', ')} — ${event.decision.note}`,
    );
  }
});

const outcome = await run.result();
console.log(`\n${outcome.status}: ${outcome.finalResponse?.text}`);
console.log(
  `writes that reached the CRM: ${writes.length}; disabled tools: ${JSON.stringify(run.context.disabledTools)}`,
);
