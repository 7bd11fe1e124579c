import { z } from 'zod';
import type { Planner, PlanResult } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';

/** The demo customer the demo agent asks about. */
export const DEMO_CUSTOMER = { email: 'ada@example.com', name: 'Ada Lovelace', plan: 'free' } as const;

/** A CRM lookup the demo agent calls once per run. */
export const demoLookupTool = defineTool({
  id: 'crm.lookup_customer',
  description: 'Find a customer by email',
  input: z.object({ email: z.email().describe('Customer email') }),
  output: z.object({ name: z.string(), plan: z.enum(['free', 'pro']) }),
  examples: [{ email: DEMO_CUSTOMER.email }],
  execute: async () => ({ name: DEMO_CUSTOMER.name, plan: DEMO_CUSTOMER.plan }),
});

/**
 * The scripted planner of `toolwarden inspect`'s demo (and of tests): each run looks the
 * customer up, asks which plan to set (a clarification, so the run waits in
 * `awaiting.clarification`), then answers. Stateless, so any number of runs can share it;
 * `delayMs` makes each planner turn visible in the chart.
 *
 * | turn                         | result                                        |
 * |------------------------------|-----------------------------------------------|
 * | start                        | tool call `crm.lookup_customer`               |
 * | resume with tool results     | await clarification `plan`                    |
 * | resume with the answer       | final response                                |
 */
export function demoPlanner(options: { delayMs?: number } = {}): Planner {
  const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const wait = () => delay(options.delayMs ?? 600);
  return {
    async planStart(): Promise<PlanResult> {
      await wait();
      return {
        notes: ['Looking the customer up first'],
        toolCalls: [{ name: demoLookupTool.id, input: { email: DEMO_CUSTOMER.email } }],
      };
    },
    async planResume(input): Promise<PlanResult> {
      await wait();
      if (input.clarification) {
        return {
          finalResponse: { text: `${DEMO_CUSTOMER.name} is now on the ${input.clarification.answer} plan.` },
        };
      }
      if (input.finalize) return { finalResponse: { text: `Stopped: ${input.finalize.reason}.` } };
      return {
        await: {
          clarification: {
            id: 'plan',
            question: `${DEMO_CUSTOMER.name} is on the free plan. Which plan should she get: free or pro?`,
            missingFields: ['plan'],
          },
        },
      };
    },
  };
}
