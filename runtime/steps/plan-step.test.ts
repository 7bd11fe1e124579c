import { describe, expect, it } from 'vitest';
import type { Message } from '../../run/message.ts';
import { readonlyTranscript } from './plan-step.ts';

// What a planner gets of the transcript: its own array of the run's messages, each deep-frozen,
// however the transcript changed since the turn before (the check passes over the part a turn
// already handed out only when it is that very part, object for object).

const user = (content: string): Message => ({ role: 'user', content });
const proposal = (id: string): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ toolCallId: id, toolName: 'math.add', input: { a: 1, b: { c: 2 } } }],
});
const result = (id: string): Message => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'math.add',
  content: '3',
});

function expectDeepFrozen(messages: Message[]): void {
  for (const message of messages) {
    expect(Object.isFrozen(message)).toBe(true);
    if (message.role === 'assistant')
      for (const call of message.toolCalls ?? []) {
        expect(Object.isFrozen(call)).toBe(true);
        expect(Object.isFrozen((call.input as { b: object }).b)).toBe(true);
      }
  }
}

describe('readonlyTranscript', () => {
  it('hands out an array of its own, every message deep-frozen, turn after turn', () => {
    const first = [user('add'), proposal('c1'), result('c1')];
    const given = readonlyTranscript(first);
    expect(given).not.toBe(first);
    expect(given).toEqual(first);
    expectDeepFrozen(given);
    const second = [...first, proposal('c2'), result('c2')];
    expectDeepFrozen(readonlyTranscript(second));
  });

  it('freezes a message replaced before the end since the last turn (same last message)', () => {
    const first = [user('add'), proposal('c1'), result('c1')];
    readonlyTranscript(first);
    // As Temporal's worker hands it over: a result read back from its payload store is a new
    // object in the middle of the cached, frozen ones.
    const replaced = result('c1-read-back');
    const next = [first[0]!, replaced, first[2]!];
    expectDeepFrozen(readonlyTranscript(next));
    expect(Object.isFrozen(replaced)).toBe(true);
  });

  it('freezes an unfrozen message before a frozen one in a transcript it never handed out', () => {
    const frozenLast = Object.freeze(user('frozen by someone'));
    const early = proposal('c9');
    expectDeepFrozen(readonlyTranscript([user('hi'), early, frozenLast]));
    expect(Object.isFrozen(early)).toBe(true);
  });
});
