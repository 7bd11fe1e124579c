/**
 * The refund tool of the approve-with-edits tests (issue 24 item 4), from code and from the
 * inspector page: it needs a confirmation, refuses amounts over 1,000 EUR at the tool boundary,
 * and records each input it ran with.
 */
import { z } from 'zod';
import { defineTool } from '../../tools/define-tool.ts';

export function refundTool() {
  const refunded: { orderId: string; amountEur: number }[] = [];
  const tool = defineTool({
    id: 'payments.refund',
    description: 'Refund an order',
    input: z.object({ orderId: z.string(), amountEur: z.number().positive().max(1_000) }),
    requiresConfirmation: true,
    execute: async (input) => {
      refunded.push(input);
      return { refunded: input.amountEur };
    },
  });
  return { tool, refunded };
}

/**
 * The refund tool of the permissions-and-risk and sticky-approval tests (issue 35 items 3, 4):
 * it needs `payments:refund`, is `high` risk above 1,000 EUR (`medium` below), has a summary,
 * always asks for approval, and records each input it ran with.
 */
export function riskyRefundTool() {
  const refunded: { orderId: string; amount: number }[] = [];
  const tool = defineTool({
    id: 'payments.refund',
    description: 'Refund an order',
    input: z.object({ orderId: z.string(), amount: z.number().positive() }),
    permissions: ['payments:refund'],
    risk: ({ amount }) => (amount > 1000 ? 'high' : 'medium'),
    summary: ({ orderId, amount }) => `Refund ${amount} EUR of ${orderId}`,
    requiresConfirmation: true,
    execute: async (input) => {
      refunded.push(input);
      return { refunded: input.amount };
    },
  });
  return { tool, refunded };
}
