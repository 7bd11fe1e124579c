/**
 * The agent the embedding example hosts: a support agent that adds a customer to the CRM. It
 * asks which plan when the request does not say, asks a person to approve the write, then
 * upserts the profile and answers. The planner is code (no LLM, so the example runs offline) and
 * decides from the transcript alone, so any process can take a run over after a restart.
 *
 * The CRM write is the tool a crash can make run twice: it passes `meta.toolCallId` as its
 * idempotency key, and the CRM applies a key once.
 *
 * @module
 */

import {
  defineTool,
  type Message,
  type PlanInput,
  type Planner,
  type PlanResult,
  type PlanResumeInput,
} from 'toolwarden';
import { z } from 'zod';

/** A stand-in for a CRM that honours idempotency keys (as Stripe-style APIs do). */
export class DemoCrm {
  private readonly profiles = new Map<string, { email: string; plan: string; id: string }>();
  private readonly applied = new Map<string, string>();

  /** Upserts once per idempotency key; a repeated key returns the first result. */
  upsert(input: { email: string; plan: string }, idempotencyKey: string): { id: string } {
    const done = this.applied.get(idempotencyKey);
    if (done !== undefined) return { id: done };
    const id = this.profiles.get(input.email)?.id ?? `cus_${this.profiles.size + 1}`;
    this.profiles.set(input.email, { ...input, id });
    this.applied.set(idempotencyKey, id);
    return { id };
  }
}

export function supportAgent(crm = new DemoCrm()) {
  const upsertProfile = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
    output: z.object({ id: z.string() }),
    tags: ['write'],
    execute: async (input, { meta }) => crm.upsert(input, meta.toolCallId),
  });

  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    if ('finalize' in input && input.finalize)
      return { finalResponse: { text: 'I had to stop before finishing.' } };
    const request = textOf(input.messages.find((message) => message.role === 'user'));
    const email = /[\w.+-]+@[\w-]+\.[\w.]+/.exec(request)?.[0];
    if (email === undefined) return { finalResponse: { text: 'Which customer? I need an email address.' } };
    const tool = input.messages.find((message) => message.role === 'tool');
    if (tool?.role === 'tool') {
      return {
        finalResponse: {
          text: `${email} is on the ${planOf(input.messages)} plan (${JSON.stringify(tool.content)}).`,
        },
      };
    }
    const plan = planOf(input.messages);
    if (plan === undefined) {
      const asked = input.messages.some((message) => message.role === 'assistant');
      return {
        await: {
          clarification: {
            id: 'plan',
            question: asked
              ? 'Please answer "free" or "pro".'
              : `Which plan should ${email} be on: free or pro?`,
            missingFields: ['plan'],
            restrictToTool: 'crm.upsert_profile',
          },
        },
      };
    }
    const confirmation = 'confirmation' in input ? input.confirmation : undefined;
    if (confirmation === undefined) {
      return {
        await: {
          confirmation: {
            id: 'approve-upsert',
            prompt: `Put ${email} on the ${plan} plan?`,
            details: { email, plan },
          },
        },
      };
    }
    if (!confirmation.approved) return { finalResponse: { text: `Left ${email} unchanged.` } };
    return { toolCalls: [{ name: 'crm.upsert_profile', input: { email, plan } }] };
  };

  const planner: Planner = { planStart: decide, planResume: decide };
  return { planner, tools: [upsertProfile], crm };
}

function textOf(message: Message | undefined): string {
  return message && typeof message.content === 'string' ? message.content : '';
}

/** The plan named in the request or in an answer, if any. */
function planOf(messages: Message[]): 'free' | 'pro' | undefined {
  for (const message of [...messages].reverse()) {
    if (message.role !== 'user') continue;
    const plan = /\b(free|pro)\b/i.exec(textOf(message))?.[1]?.toLowerCase();
    if (plan === 'free' || plan === 'pro') return plan;
  }
  return undefined;
}
