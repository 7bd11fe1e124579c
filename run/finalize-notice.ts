import type { Caps, FinalizeReason } from './caps.ts';

/** A call of the last batch the run did not make (refused, denied, or stopped with its batch). */
export interface NotMadeCall {
  /** The tool id (`payments.refund`). */
  name: string;
  /** The run's id for the call. */
  toolCallId: string;
  /** The id the planner gave it (a provider's `call_0`), when it gave one. */
  providerToolCallId?: string;
  /** Why it was not made: the start of its error message. */
  why?: string;
}

/**
 * What a finalizing turn is told (`PlanResumeInput.finalize`, issue 24 item 2): it must answer
 * now, with no tools; why (`reason`, and for a policy its name and note); and which calls were not
 * made, so a model does not claim they were. `message` is all of it as text for a model;
 * `modelPlanner` sends it as the last message of the prompt.
 */
export interface FinalizeNotice {
  reason: FinalizeReason;
  /** The text for a model (see {@link finalizeMessage}). */
  message?: string;
  /** The policy that finalized the run, when one did. */
  policy?: string;
  /** The policy decision's `note` (why, in its words). */
  note?: string;
  /** Calls of the last batch that were not made, in call order. */
  notMade?: NotMadeCall[];
}

/** Characters kept of one call's "why" in the message. */
const WHY_CHARS = 160;

/** Why, in words, for the reasons the runtime itself finalizes with. */
function capText(reason: FinalizeReason, caps: Partial<Caps> | undefined): string | undefined {
  const n = (value: number | undefined) => (value === undefined ? '' : ` (${value})`);
  switch (reason) {
    case 'tool_cap':
      return `the run used all the tool calls it may make${n(caps?.maxToolCalls)}`;
    case 'failure_cap':
      return `too many tool calls failed in a row${n(caps?.maxConsecutiveFailedToolCalls)}`;
    case 'time_budget':
      return `the run's time budget ran out${caps?.timeBudgetMs === undefined ? '' : ` (${caps.timeBudgetMs} ms)`}`;
    case 'token_cap':
      return `the run used all the tokens it may use${n(caps?.maxTotalTokens)}`;
    case 'turn_cap':
      return `the run took all the planner turns it may take${n(caps?.maxTurns)}`;
    case 'await_cap':
      return `the run asked for answers as many times as it may${n(caps?.maxAwaits)}`;
    case 'budget_exhausted':
      return "the run's money budget cannot pay for another planner turn";
    default:
      return undefined;
  }
}

/**
 * The finalizing turn's message: stop now, why, and what was not done.
 *
 * ```text
 * The run is stopping: give your final answer now, in text. No tools can be called.
 * Why: policy "refund-limit" stopped the run: refund_over_limit (500 EUR is over the 100 EUR limit).
 * These calls were NOT made: payments.refund (call_1: Not executed: the run stopped this batch).
 * Do not say or imply that they were made or that their effects happened.
 * ```
 *
 * `toolName` maps tool ids to the names the reader knows them by (a model's provider names).
 */
export function finalizeMessage(
  notice: Omit<FinalizeNotice, 'message'>,
  options: { caps?: Partial<Caps>; toolName?: (id: string) => string } = {},
): string {
  const name = options.toolName ?? ((id: string) => id);
  const cap = capText(notice.reason, options.caps);
  const why = notice.policy
    ? `policy "${notice.policy}" stopped the run: ${notice.reason}${notice.note ? ` (${notice.note})` : ''}`
    : `${cap ?? String(notice.reason)}${notice.note ? ` (${notice.note})` : ''}`;
  const lines = [
    'The run is stopping: give your final answer now, in text. No tools can be called.',
    `Why: ${why}.`,
  ];
  const notMade = notice.notMade ?? [];
  if (notMade.length > 0) {
    const calls = notMade.map((call) => {
      const id = call.providerToolCallId ?? call.toolCallId;
      const detail = call.why ? `: ${clip(call.why)}` : '';
      return `${name(call.name)} (${id}${detail})`;
    });
    lines.push(
      `These calls were NOT made: ${calls.join('; ')}.`,
      'Do not say or imply that they were made or that their effects happened.',
    );
  }
  return lines.join('\n');
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > WHY_CHARS ? `${line.slice(0, WHY_CHARS)}…` : line;
}
