/**
 * The resolutions an app gives for calls in doubt (`run.resolveInDoubt`, docs/durability.md
 * §Effects), checked where they enter as other answers are (run-answers.ts): which calls are in
 * doubt is the handle's business.
 *
 * @module
 */

import type { InDoubtResolution } from '../machines/run-context.ts';
import { AnswerProblem, checkedToolResults } from './run-answers.ts';

const STATUSES = new Set(['done', 'not_done', 'failed']);

/**
 * `[toolCallId, resolution]` pairs, each checked: an object per call, a known `status`, a
 * `done` output JSON can carry (at most 16 MiB), a `failed` error with a string `message` (kept
 * to 4,096 characters). @throws AnswerProblem
 */
export function checkedInDoubtResolutions(resolutions: unknown): [string, InDoubtResolution][] {
  if (resolutions === null || typeof resolutions !== 'object' || Array.isArray(resolutions)) {
    throw new AnswerProblem('resolutions must be an object: toolCallId → { status, ... }');
  }
  const out: [string, InDoubtResolution][] = [];
  for (const [toolCallId, value] of Object.entries(resolutions as Record<string, unknown>)) {
    const status = (value as { status?: unknown } | null)?.status;
    if (typeof status !== 'string' || !STATUSES.has(status)) {
      throw new AnswerProblem(
        `the resolution of "${toolCallId.slice(0, 100)}" needs a status of done, not_done or failed`,
      );
    }
    if (status === 'not_done') {
      out.push([toolCallId, { status }]);
      continue;
    }
    // The same checks as an external tool's result or error (JSON, size, message).
    const [checked] = checkedToolResults([
      status === 'done'
        ? { toolCallId, result: (value as { output?: unknown }).output }
        : { toolCallId, error: (value as { error?: unknown }).error ?? {} },
    ]);
    out.push([
      toolCallId,
      'error' in checked!
        ? { status: 'failed', error: { message: checked.error.message } }
        : { status: 'done', output: checked!.result },
    ]);
  }
  return out;
}
