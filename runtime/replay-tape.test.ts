import { describe, expect, it } from 'vitest';
import type { Message } from '../run/message.ts';
import type { RunEvent } from '../run/run-events.ts';
import { RecordedReplay, ReplayTape } from './replay-tape.ts';

const transcript: Message[] = [
  { role: 'user', content: 'refund A-17' },
  {
    role: 'assistant',
    toolCalls: [
      { toolCallId: 'p:t1:c1', toolName: 'payments.refund', input: '{"orderId":"A-17","amountEur":5}' },
    ],
  },
];
const base = { runId: 'p', at: 1 };
const scheduled: RunEvent = {
  ...base,
  type: 'tool_call_scheduled',
  turnId: 'p:t1',
  toolCallId: 'p:t1:c1',
  tool: 'payments.refund',
  attempt: 1,
};

describe('ReplayTape: what a recorded replay may reuse (issue 38 item 2)', () => {
  it('reuses a recorded result for the same call at the same position, keys and JSON text aside', () => {
    const result = {
      name: 'payments.refund',
      toolCallId: 'p:t1:c1',
      executed: true,
      result: { refunded: 5 },
    };
    const tape = new ReplayTape(
      'p',
      [scheduled, { ...base, type: 'tool_result', turnId: 'p:t1', result }],
      transcript,
    );
    const replay = new RecordedReplay(tape, true);
    expect(replay.call(1, 0, 'payments.refund', { amountEur: 5, orderId: 'A-17' })).toMatchObject({
      kind: 'replay',
    });
    // Another position, another input, another tool: live, and from then on everything is.
    expect(
      new RecordedReplay(tape, true).call(2, 0, 'payments.refund', { amountEur: 5, orderId: 'A-17' }).kind,
    ).toBe('live');
    expect(
      new RecordedReplay(tape, true).call(1, 0, 'payments.refund', { amountEur: 6, orderId: 'A-17' }).kind,
    ).toBe('live');
    const diverged = new RecordedReplay(tape, true);
    diverged.call(1, 0, 'payments.void', {});
    expect(diverged.call(1, 0, 'payments.refund', { amountEur: 5, orderId: 'A-17' }).kind).toBe('live');
  });

  it('never offers to run again a call whose only result is marked in doubt, nor one never answered', () => {
    const inDoubt = {
      name: 'payments.refund',
      toolCallId: 'p:t1:c1',
      executed: false,
      inDoubt: { cause: 'restored' as const, startedAt: 1 },
    };
    for (const events of [
      [scheduled, { ...base, type: 'tool_result', turnId: 'p:t1', result: inDoubt }],
      [scheduled],
    ]) {
      const replay = new RecordedReplay(new ReplayTape('p', events as RunEvent[], transcript), true);
      expect(replay.call(1, 0, 'payments.refund', { orderId: 'A-17', amountEur: 5 })).toMatchObject({
        kind: 'in_doubt',
        recorded: { toolCallId: 'p:t1:c1' },
      });
    }
  });
});
