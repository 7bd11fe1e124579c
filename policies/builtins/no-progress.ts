import { type CanonicalOptions, callFingerprint, valueFingerprint } from '../call-fingerprint.ts';
import { definePolicy, type Policy, type PolicyDecision } from '../define-policy.ts';
import type { JsonValue } from '../policy-json.ts';
import { matchesTool, type ToolSelector } from '../tool-selector.ts';

/** Options of {@link noProgress}. */
export interface NoProgressOptions {
  /** Same results in a row after which the result carries a `no_progress` hint. Default 3. */
  hintAfter?: number;
  /** Same results in a row after which the call is refused, not run. Default 5. */
  refuseAfter?: number;
  /** Calls made (run or refused) with the same result in a row at which the run escalates. Default 7. */
  escalateAfter?: number;
  /**
   * `finalize` (default: reason `no_progress`; on by default, it must not leave a run waiting in
   * an app that answers nobody) or `ask` a person (`awaiting.clarification`).
   */
  escalate?: 'ask' | 'finalize';
  /** Numbers in inputs and results within this of each other are one number. Default 0 (exact). */
  numericTolerance?: number;
  /** `collapse` (default): whitespace runs inside strings are one space, ends trimmed. */
  whitespace?: CanonicalOptions['whitespace'];
  /** The tools it watches (ids or tags). Default: every tool. */
  tools?: ToolSelector;
  /** Default `no-progress`. */
  name?: string;
}

/** What the policy remembers of one call (by fingerprint). */
interface Seen {
  /** The fingerprint of its last result. */
  result: string;
  /** Runs in a row that gave that result. */
  same: number;
  /** Calls in a row (run or refused) since the result last changed. */
  made: number;
  /** The last result, clipped (for the hint). */
  last: string;
}

interface Memory {
  /** Call fingerprint → what it gave; the most recent last, at most {@link REMEMBERED}. */
  seen: Record<string, Seen>;
}

/** Distinct calls remembered per run (the oldest forgotten first). */
const REMEMBERED = 64;
/** Characters of the last result quoted in the hint. */
const LAST_RESULT_CHARS = 300;

/**
 * Stops a planner that makes no progress (issue 35 item 1; docs/policies.md §No progress): the
 * same call (same tool, same canonical input: {@link callFingerprint}) giving the same result
 * (canonical, {@link valueFingerprint}) again and again. Calls whose results change (a poller)
 * never count: each change starts the count again. Refused calls (validation) are
 * `repeatedInvalidCall`'s, counted apart.
 *
 * | the same call, same result, in a row | decision (defaults)                                                  |
 * |--------------------------------------|----------------------------------------------------------------------|
 * | `hintAfter` (3) … `refuseAfter` (5) runs | `hint`: the result carries a RetryHint `no_progress` (how many times, the last result) |
 * | the next call, until `escalateAfter` | `refuse`: not run, "not run: made 5 times with the same result"       |
 * | the `escalateAfter`th call (7)       | refused, and `finalize` (`no_progress`) or `ask` a person              |
 *
 * So a model repeating one lookup runs it 5 times (hints on the 3rd, 4th and 5th results), is
 * refused on the 6th, and the run finalizes on the 7th. Every decision carries the call's
 * `fingerprint`. In `defaultPolicies()`. State: per call its last result's fingerprint and counts
 * (64 calls at most). Its `onToolBatch` is gated (`consultBatchWhen`): a run's batches skip the
 * policy step until a call is due to be refused.
 */
export function noProgress(options: NoProgressOptions = {}): Policy {
  const hintAfter = Math.max(1, options.hintAfter ?? 3);
  const refuseAfter = Math.max(hintAfter, options.refuseAfter ?? 5);
  const escalateAfter = Math.max(refuseAfter + 1, options.escalateAfter ?? 7);
  const escalate = options.escalate ?? 'finalize';
  const canonical: CanonicalOptions = {
    numericTolerance: options.numericTolerance ?? 0,
    whitespace: options.whitespace ?? 'collapse',
  };
  return definePolicy({
    name: options.name ?? 'no-progress',
    description: `Hint after ${hintAfter} identical results of one call, refuse after ${refuseAfter}, ${escalate} at ${escalateAfter}`,
    // Batches are consulted only once some call is due to be refused: until then a run pays
    // only for the review of its results.
    consultBatchWhen: (state) =>
      Object.values((state as Partial<Memory> | undefined)?.seen ?? {}).some(
        (seen) => seen.same >= refuseAfter,
      ),
    onToolBatch(batch, ctx) {
      const memory = readMemory(ctx.state);
      const refused: string[] = [];
      let made = 0;
      let fingerprint: string | undefined;
      let tool = '';
      for (const call of batch) {
        if (!matchesTool(options.tools, ctx.tool(call.name))) continue;
        const id = callFingerprint(call.name, call.input, canonical);
        const seen = memory.seen[id];
        if (!seen || seen.same < refuseAfter) continue;
        seen.made += 1;
        refused.push(call.toolCallId);
        if (seen.made >= made) {
          made = seen.made;
          fingerprint = id;
          tool = call.name;
        }
      }
      if (refused.length === 0) return { state: memory as unknown as JsonValue };
      const why = `not run: made ${refuseAfter} times with the same result`;
      const decision: PolicyDecision = {
        refuse: {
          calls: refused,
          message: `${why}; use the result you have, or try something else`,
          reason: 'no_progress',
        },
        fingerprint,
        note: `${tool}: ${why} (call ${made} of the same)`,
        state: memory as unknown as JsonValue,
      };
      if (made < escalateAfter) return decision;
      return escalate === 'ask'
        ? {
            ...decision,
            awaitClarification: {
              question: `${tool} keeps being called with the same result (${made} times). How should I go on?`,
            },
            note: `${decision.note}; asking a person`,
          }
        : { ...decision, finalize: { reason: 'no_progress' }, note: `${decision.note}; finalizing` };
    },
    repeatKey: (tool, input) => callFingerprint(tool, input, canonical),
    onToolResult(result, ctx, call) {
      // A call refused before it ran (validation, a policy) or failing is not a result: counted apart.
      if (
        call === undefined ||
        !result.executed ||
        result.error ||
        !matchesTool(options.tools, ctx.tool(result.name))
      )
        return;
      const memory = readMemory(ctx.state);
      const id = callFingerprint(call.name, call.input, canonical);
      const value = result.result ?? null;
      const resultId = valueFingerprint(value, canonical);
      // The same result in a row: this one and the earlier calls' (newest first); refused calls
      // between them (an error) neither count nor break the run of results.
      let same = 1;
      let made = 1;
      for (const earlier of call.earlier ?? []) {
        made += 1;
        if (earlier.error !== undefined) continue;
        if (valueFingerprint(earlier.result ?? null, canonical) !== resultId) {
          made -= 1;
          break;
        }
        same += 1;
      }
      const seen: Seen = { result: resultId, same, made, last: clip(value) };
      delete memory.seen[id];
      memory.seen[id] = seen;
      const keys = Object.keys(memory.seen);
      for (const key of keys.slice(0, Math.max(0, keys.length - REMEMBERED))) delete memory.seen[key];
      if (same < hintAfter) return { state: memory as unknown as JsonValue };
      const message = `${result.name} was called ${same} times with the same input and gave the same result each time (last: ${seen.last}). Calling it again gives nothing new: use the result, or try something else.`;
      return {
        hint: { reason: 'no_progress', message },
        fingerprint: id,
        note: `${result.name}: same call, same result ${same} times; hint no_progress`,
        state: memory as unknown as JsonValue,
      };
    },
  });
}

function readMemory(state: unknown): Memory {
  const value = (state ?? {}) as Partial<Memory>;
  return structuredClone({ seen: value.seen ?? {} });
}

function clip(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > LAST_RESULT_CHARS ? `${text.slice(0, LAST_RESULT_CHARS)}…` : text;
}
