import { z } from 'zod';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

/**
 * A run whose planner first sends invalid arguments, reads the RetryHint, repairs the call and
 * finishes: the whole promise of the tool boundary in a few lines of output.
 */
export async function runDemo(): Promise<void> {
  const upsert = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
    output: z.object({ id: z.string() }),
    examples: [{ email: 'ada@example.com', plan: 'pro' }],
    execute: async (input) => ({ id: `cus_${input.email.split('@')[0]}` }),
  });
  const planner = scriptedPlanner([
    { toolCalls: [{ name: 'crm.upsert_profile', input: '{"email": "ada@example.com", "plan": "PRO"}' }] },
    (input) => {
      const hint = (input as PlanResumeInput).toolResults[0]?.retryHint;
      const prior = hint?.priorInput ?? {};
      const allowed = hint?.issues?.find((issue) => issue.path === 'plan')?.allowed as string[] | undefined;
      const plan = allowed?.find((value) => value.toLowerCase() === String(prior.plan).toLowerCase());
      return { toolCalls: [{ name: 'crm.upsert_profile', input: { ...prior, plan } }] };
    },
    { finalResponse: { text: 'Ada is on the pro plan.' } },
  ]);
  const runtime = createRuntime({ agent: { id: 'demo', name: 'Demo agent' }, planner, tools: [upsert] });
  const run = runtime.start({ messages: [{ role: 'user', content: 'Add ada@example.com as pro' }] });
  run.events$.subscribe((event) => {
    if (event.type === 'state_changed') console.log(`  state    ${event.state}`);
    if (event.type === 'retry_hint') console.log(`  hint     ${event.hint.reason}: ${event.hint.message}`);
    if (event.type === 'tool_result' && !event.result.error) {
      console.log(`  result   ${event.result.name} → ${JSON.stringify(event.result.result)}`);
    }
  });
  const outcome = await run.result();
  console.log(`\n${outcome.status}: ${outcome.finalResponse?.text ?? outcome.error?.message}`);
}
