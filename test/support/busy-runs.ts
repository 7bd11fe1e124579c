import { z } from 'zod';
import type { Planner, PlanResult } from '../../run/planner.ts';
import type { Runtime } from '../../runtime/create-runtime.ts';
import { defineTool } from '../../tools/define-tool.ts';

/**
 * A realistic load for the inspector (issue 27 item 1): real runs of `turns` planner turns with
 * `calls` tool calls each (a CRM lookup returning a small record), each run a real actor with its
 * context growing turn by turn. A run whose first message is `ask` waits for a clarification
 * ("Which plan?") before its turns.
 */
export const lookupTool = defineTool({
  id: 'crm.lookup',
  description: 'Looks a customer up by email',
  input: z.object({ email: z.string(), turn: z.number() }),
  execute: async ({ email, turn }) => ({
    email,
    plan: turn % 2 === 0 ? 'pro' : 'free',
    notes: `seen on turn ${turn}: account in good standing, last invoice paid`,
  }),
});

export function busyPlanner(turns: number, calls: number): Planner {
  const batch = (turn: number): PlanResult => ({
    toolCalls: Array.from({ length: calls }, (_, i) => ({
      name: 'crm.lookup',
      input: { email: `customer${i}@example.com`, turn },
    })),
  });
  return {
    async planStart(input) {
      const first = input.messages[0];
      if (first?.role === 'user' && first.content === 'ask') {
        return {
          await: { clarification: { id: 'which-plan', question: 'Which plan?', missingFields: ['plan'] } },
        };
      }
      return turns > 0 ? batch(1) : { finalResponse: { text: 'nothing to do' } };
    },
    async planResume(input) {
      const done = input.messages.filter((message) => message.role === 'assistant').length;
      if (done >= turns) return { finalResponse: { text: `checked ${turns * calls} customers` } };
      return batch(done + 1);
    },
  };
}

/**
 * Runs `count` busy runs to completion, `parallel` at a time, numbered from `from`; resolves with
 * their ids, oldest first.
 */
export async function runBusyRuns(
  runtime: Runtime,
  count: number,
  parallel = 8,
  from = 0,
): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = from + next++;
      const run = runtime.start({
        runId: `busy-${String(n).padStart(5, '0')}`,
        messages: [{ role: 'user', content: `check the customers (${n})` }],
        labels: { batch: String(Math.floor(n / 100)) },
      });
      ids[n - from] = run.runId;
      const out = await run.result();
      if (out.status !== 'completed') throw new Error(`busy run ${run.runId} ended ${out.status}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}
