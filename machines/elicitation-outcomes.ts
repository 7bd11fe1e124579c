/**
 * A running call's question to a person (issue 39 item 4, docs/mcp.md §Elicitation): what the
 * guards and actions around `awaiting.elicitation` read and change, pure, as run-outcomes.ts
 * does for the rest. The call keeps running in `steps` while the run waits.
 *
 * | moment                                        | outcome                                                        |
 * |-----------------------------------------------|----------------------------------------------------------------|
 * | `call.elicit` from a call without a result    | `awaiting.elicitation`: a clarification (a form with fields) or a confirmation (none), marked `elicitation`; `flow.callsRunning` |
 * | `call.elicit` from a call that ended, or outside `executing` | answered `cancel` at once                        |
 * | `provide.clarification` for it                | `steps` hears `accept` with the text; back to `executing`, which starts nothing |
 * | `confirm` for it                              | approved: `accept`; denied: `decline` (with the reason)         |
 * | the asking call's `tool.done` / `tool.error`  | its result kept, the question dropped; back to `executing`      |
 * | `cancel`                                      | `steps` stops: the question is declined, the calls in doubt as in `executing` |
 * | `steps.restored` (the process died while it waited) | the server's request is gone: the question dropped, the calls asked for again as after any restore (re-run or in doubt per their effects) |
 *
 * @module
 */

import type { ElicitationAnswer } from '../tools/elicitation.ts';
import type { AwaitState, RunContext } from './run-context.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import type { StepRequest } from './run-steps.ts';
import { withFlow } from './run-updates.ts';

/** Characters of a call's question kept in the run (its snapshot, events). */
export const MAX_ELICITATION_MESSAGE_CHARS = 4_096;
/** Fields of a form kept as the clarification's `missingFields`. */
export const MAX_ELICITATION_FIELDS = 50;

/** Guard: a `call.elicit` from a call of the batch that has no result yet. */
export function isOpenCallElicitation(context: RunContext, event: RunMachineEvent): boolean {
  if (event.type !== 'call.elicit') return false;
  const index = context.batch.pending.findIndex((call) => call.toolCallId === event.elicitation.toolCallId);
  return index >= 0 && context.batch.results[index] === null;
}

/** `requestElicitation`: the question as the run's awaiting (a clarification or a confirmation). */
export function enterElicitationUpdate(context: RunContext, event: RunMachineEvent): Partial<RunContext> {
  if (event.type !== 'call.elicit') return {};
  const { id, toolCallId, tool, request } = event.elicitation;
  const mark = { toolCallId, tool };
  const question = String(request.message).slice(0, MAX_ELICITATION_MESSAGE_CHARS);
  const fields = Object.keys(request.requestedSchema?.properties ?? {})
    .slice(0, MAX_ELICITATION_FIELDS)
    .map((field) => field.slice(0, 200));
  const awaiting: AwaitState =
    fields.length === 0
      ? { kind: 'confirmation', confirmation: { id, prompt: question }, elicitation: mark }
      : {
          kind: 'clarification',
          clarification: { id, question, missingFields: fields, restrictToTool: tool },
          elicitation: mark,
        };
  return withFlow(context, { awaiting, callsRunning: true });
}

/** Guard: a `provide.clarification` or `confirm` answering the question the run waits on. */
export function isElicitationAnswer(context: RunContext, event: RunMachineEvent): boolean {
  const awaiting = context.flow.awaiting;
  if (awaiting?.kind === 'clarification' && awaiting.elicitation !== undefined) {
    return event.type === 'provide.clarification' && event.id === awaiting.clarification.id;
  }
  if (awaiting?.kind === 'confirmation' && awaiting.elicitation !== undefined) {
    return event.type === 'confirm' && event.id === awaiting.confirmation.id;
  }
  return false;
}

/** What `steps` is told of an answer (`answerElicitation`): the call's {@link ElicitationAnswer}. */
export function elicitationAnswerRequest(context: RunContext, event: RunMachineEvent): StepRequest {
  const awaiting = context.flow.awaiting;
  const id =
    awaiting?.kind === 'clarification'
      ? awaiting.clarification.id
      : awaiting?.kind === 'confirmation'
        ? awaiting.confirmation.id
        : '';
  const answer: ElicitationAnswer =
    event.type === 'provide.clarification'
      ? { action: 'accept', answer: event.answer }
      : event.type === 'confirm' && event.approved
        ? { action: 'accept' }
        : event.type === 'confirm' && event.reason !== undefined
          ? { action: 'decline', reason: event.reason }
          : { action: 'decline' };
  return { type: 'elicited', id, answer };
}

/** `refuseElicitation`: a question the run cannot take now (its call ended) is answered `cancel`. */
export function refusedElicitationRequest(event: RunMachineEvent): StepRequest {
  return {
    type: 'elicited',
    id: event.type === 'call.elicit' ? event.elicitation.id : '',
    answer: { action: 'cancel' },
  };
}

/** Guard: the `tool.done` / `tool.error` of the call whose question the run waits on. */
export function endsElicitingCall(context: RunContext, event: RunMachineEvent): boolean {
  const awaiting = context.flow.awaiting;
  const mark =
    awaiting?.kind === 'clarification' || awaiting?.kind === 'confirmation'
      ? awaiting.elicitation
      : undefined;
  if (mark === undefined) return false;
  if (event.type === 'tool.error') return event.toolCallId === mark.toolCallId;
  if (event.type === 'tool.done')
    return context.batch.pending[event.output.index]?.toolCallId === mark.toolCallId;
  return false;
}

/** `leaveElicitation`: the run waits on no question; its calls still run (`callsRunning` stays for `executing`'s entry). */
export function leaveElicitationUpdate(context: RunContext): Partial<RunContext> {
  return withFlow(context, { awaiting: null });
}
