import { describe, expect, it } from 'vitest';
import {
  inDoubtCallLine,
  MAX_ERROR_CHARS,
  readInDoubtResolutions,
  refusedCall,
} from '../inspector/page/in-doubt-form.ts';

/** The in-doubt form's pure part (issue 34 item 3; docs/inspection.md §Page), without a browser. */
const field = (toolCallId: string, choice: '' | 'done' | 'not_done' | 'failed', output = '', error = '') => ({
  toolCallId,
  choice,
  output,
  error,
});

describe('reading the in-doubt form', () => {
  it('reads done with its output, not done, and failed with its message into resolveInDoubt resolutions', () => {
    expect(
      readInDoubtResolutions([
        field('r1:t1:c1', 'done', '{ "refunded": "A-17" }'),
        field('r1:t1:c2', 'not_done', 'ignored', 'ignored'),
        field('r1:t1:c3', 'failed', '', '  card declined by the bank  '),
        field('r1:t1:c4', 'done', 'null'),
      ]),
    ).toEqual({
      ok: true,
      resolutions: {
        'r1:t1:c1': { status: 'done', output: { refunded: 'A-17' } },
        'r1:t1:c2': { status: 'not_done' },
        'r1:t1:c3': { status: 'failed', error: { message: 'card declined by the bank' } },
        'r1:t1:c4': { status: 'done', output: null },
      },
    });
  });

  it('refuses a call without a choice, naming it, even when the calls before it are fine', () => {
    expect(readInDoubtResolutions([field('a', 'not_done'), field('b', '')])).toEqual({
      ok: false,
      toolCallId: 'b',
      problem: 'choose done, not done (run it) or failed',
    });
  });

  it('refuses done with an empty or non-JSON output, and failed with no message or one too long', () => {
    expect(readInDoubtResolutions([field('a', 'done', '   ')])).toMatchObject({
      ok: false,
      toolCallId: 'a',
      problem: expect.stringMatching(/as JSON \(null if it returned nothing\)/),
    });
    expect(readInDoubtResolutions([field('a', 'done', '{ refunded: A-17 }')])).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^the output is not JSON: /),
    });
    expect(readInDoubtResolutions([field('a', 'failed', '', ' \n ')])).toMatchObject({
      ok: false,
      problem: 'say why it failed: the planner is told this message',
    });
    expect(readInDoubtResolutions([field('a', 'failed', '', 'x'.repeat(MAX_ERROR_CHARS + 1))])).toMatchObject(
      {
        ok: false,
        problem: `the message is ${MAX_ERROR_CHARS + 1} characters; at most ${MAX_ERROR_CHARS}`,
      },
    );
  });

  it('takes hostile JSON as data: a __proto__ key stays an own key of the output', () => {
    const read = readInDoubtResolutions([field('a', 'done', '{"__proto__": {"polluted": true}}')]);
    expect(read.ok).toBe(true);
    const output = (read as { resolutions: Record<string, { output: object }> }).resolutions.a!.output;
    expect(Object.hasOwn(output, '__proto__')).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("says each call's tool, id, start (UTC) and cause, and finds the call a refusal names", () => {
    expect(
      inDoubtCallLine({
        toolCallId: 'r1:t1:c1',
        name: 'payments.refund',
        startedAt: Date.UTC(2026, 11, 1, 23, 58, 1),
        cause: 'restored',
      }),
    ).toBe('payments.refund (r1:t1:c1) · started 2026-12-01T23:58:01.000Z · restored');
    expect(inDoubtCallLine({ toolCallId: 'x' })).toBe('tool (x)');
    const message = `Run r1: result for "r1:t1:c2" does not match payments.refund's output schema: refunded: expected string`;
    expect(refusedCall(message, ['r1:t1:c1', 'r1:t1:c2'])).toBe('r1:t1:c2');
    expect(refusedCall('Run r1: has no call in doubt', ['r1:t1:c1'])).toBeUndefined();
  });
});
