/**
 * The in-doubt form's pure part (issue 34 item 3): per call whose outcome is unknown, what the
 * person chose (it happened, with its output; it did not, run it; it failed, with why), read into
 * the `resolutions` that `runtime.resolveInDoubt(runId, resolutions)` takes, or the first call
 * whose answer cannot be sent and why. Nothing is sent until every call has a usable answer.
 */

/** A call in doubt as `await_in_doubt` lists it (run/run-events.ts `AwaitInDoubtEvent`). */
export interface InDoubtCallData {
  toolCallId: string;
  name?: string;
  input?: unknown;
  /** When the call was started, epoch ms. */
  startedAt?: number;
  cause?: string;
}

/** What the person picked for one call; `''` before they pick. */
export type InDoubtChoice = 'done' | 'not_done' | 'failed' | '';

/** One call's part of the form, as typed. */
export interface InDoubtField {
  toolCallId: string;
  choice: InDoubtChoice;
  /** The output box (JSON), read for `done`. */
  output: string;
  /** The error message box, read for `failed`. */
  error: string;
}

/** One call's resolution, as `runtime.resolveInDoubt` takes it. */
export type InDoubtResolutionBody =
  | { status: 'done'; output: unknown }
  | { status: 'not_done' }
  | { status: 'failed'; error: { message: string } };

/** The resolutions to send, or the first call whose answer is not usable and why. */
export type InDoubtRead =
  | { ok: true; resolutions: Record<string, InDoubtResolutionBody> }
  | { ok: false; toolCallId: string; problem: string };

/** Longest error message the runtime keeps (runtime/in-doubt-resolutions.ts), characters. */
export const MAX_ERROR_CHARS = 4096;

/** Reads every call's answer; the first one missing or unusable stops it (nothing half-sent). */
export function readInDoubtResolutions(fields: InDoubtField[]): InDoubtRead {
  const resolutions: Record<string, InDoubtResolutionBody> = {};
  for (const field of fields) {
    const refuse = (problem: string): InDoubtRead => ({ ok: false, toolCallId: field.toolCallId, problem });
    if (field.choice === 'not_done') {
      resolutions[field.toolCallId] = { status: 'not_done' };
    } else if (field.choice === 'done') {
      if (field.output.trim() === '') {
        return refuse('give the output the call returned, as JSON (null if it returned nothing)');
      }
      try {
        resolutions[field.toolCallId] = { status: 'done', output: JSON.parse(field.output) };
      } catch (problem) {
        return refuse(`the output is not JSON: ${(problem as Error).message}`);
      }
    } else if (field.choice === 'failed') {
      const message = field.error.trim();
      if (message === '') return refuse('say why it failed: the planner is told this message');
      if (message.length > MAX_ERROR_CHARS) {
        return refuse(`the message is ${message.length} characters; at most ${MAX_ERROR_CHARS}`);
      }
      resolutions[field.toolCallId] = { status: 'failed', error: { message } };
    } else {
      return refuse('choose done, not done (run it) or failed');
    }
  }
  return { ok: true, resolutions };
}

/** The line above a call's answer: `payments.refund (r1:t1:c1) · started 2026-12-01T23:58:01.000Z · restored`. */
export function inDoubtCallLine(call: InDoubtCallData): string {
  const parts = [`${call.name ?? 'tool'} (${call.toolCallId})`];
  if (typeof call.startedAt === 'number' && Number.isFinite(call.startedAt)) {
    parts.push(`started ${new Date(call.startedAt).toISOString()}`);
  }
  if (call.cause) parts.push(call.cause);
  return parts.join(' · ');
}

/**
 * Which call a refusal is about: the first of `toolCallIds` the runtime's message quotes
 * (`result for "r1:t1:c1" does not match …`, `no call "…" is in doubt`); undefined when none is.
 */
export function refusedCall(message: string, toolCallIds: string[]): string | undefined {
  return toolCallIds.find((id) => message.includes(`"${id}"`));
}
