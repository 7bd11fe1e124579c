import { describe, expect, it } from 'vitest';
import { anyRepeatsEarlier, findCall, findCalls } from '../policies/call-history.ts';
import type { Message } from '../run/message.ts';

/**
 * The batch-wide transcript look-ups of policies/call-history.ts (issue 36 item 5: looked up one
 * result at a time they were O(calls²), ~8 s of one synchronous stretch for a 10,000-call batch;
 * the time is bench/batch-stall.bench.ts's, these tests hold what they answer).
 */

type Call = { toolCallId: string; toolName: string; input: unknown };
const LOOK_BACK = 200;

/** What the engine asked of each result before: its call's newest holder, then every older call in the look-back. */
function repeatsOneByOne(
  messages: readonly Message[],
  ids: readonly string[],
  key: (tool: string, input: unknown) => string,
) {
  return ids.some((id) => {
    const call = findCall(messages, id);
    if (!call) return false;
    let seen = 0;
    let found = false;
    for (let i = messages.length - 1; i >= 0 && seen < LOOK_BACK; i--) {
      const message = messages[i]!;
      if (message.role !== 'assistant' || !message.toolCalls) continue;
      seen++;
      if (!found) {
        found = message.toolCalls.some((c) => c.toolCallId === id);
        continue;
      }
      if (message.toolCalls.some((c) => key(c.toolName, c.input) === key(call.toolName, call.input)))
        return true;
    }
    return false;
  });
}

/** A seeded transcript: assistant turns of 0–4 calls over a few inputs, tool messages, some reused ids. */
function transcript(seed: number, turns: number): { messages: Message[]; ids: string[] } {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const messages: Message[] = [{ role: 'user', content: 'go' }];
  const ids: string[] = [];
  for (let t = 0; t < turns; t++) {
    const calls: Call[] = Array.from({ length: next(5) }, (_, c) => ({
      // Now and then an id an earlier turn used too (the newest holder counts).
      toolCallId: next(10) === 0 && ids.length > 0 ? ids[next(ids.length)]! : `t${t}:c${c}`,
      toolName: next(2) === 0 ? 'a' : 'b',
      input: { n: next(300) },
    }));
    messages.push({ role: 'assistant', content: '', toolCalls: calls } as Message);
    for (const call of calls) {
      ids.push(call.toolCallId);
      messages.push({
        role: 'tool',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        content: 1,
      } as Message);
    }
  }
  return { messages, ids };
}

const key = (tool: string, input: unknown) => `${tool}:${JSON.stringify(input)}`;

describe('anyRepeatsEarlier', () => {
  it('answers as the one-by-one look-up did, on 400 seeded transcripts (inside and past the look-back)', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const { messages, ids } = transcript(seed, seed % 2 === 0 ? 6 : 260);
      // The newest turn's calls (a batch's results), and a random handful of any turn's.
      const last = messages.findLast((m) => m.role === 'assistant') as { toolCalls: Call[] };
      const batches = [
        last.toolCalls.map((c) => c.toolCallId),
        ids.filter((_, i) => (i * seed) % 7 === 0),
        ['missing'],
      ];
      for (const batch of batches) {
        expect(anyRepeatsEarlier(messages, batch, key), `seed ${seed}`).toBe(
          repeatsOneByOne(messages, batch, key),
        );
      }
    }
  });

  it('looks back through the newest 200 assistant messages, as before, and no further', () => {
    // The batch's message is the newest; its call's only earlier twin is `back` messages older.
    const at = (back: number) => {
      const messages: Message[] = [{ role: 'user', content: 'go' }];
      for (let i = back; i >= 0; i--) {
        const input = i === back ? { twin: true } : { i };
        messages.push({
          role: 'assistant',
          content: '',
          toolCalls: [{ toolCallId: `m${i}`, toolName: 'a', input }],
        } as Message);
      }
      (messages.at(-1) as { toolCalls: Call[] }).toolCalls[0]!.input = { twin: true };
      return anyRepeatsEarlier(messages, ['m0'], key);
    };
    expect([at(1), at(LOOK_BACK - 1), at(LOOK_BACK)]).toEqual([true, true, false]);
    expect([LOOK_BACK - 1, LOOK_BACK].map((back) => at(back))).toEqual(
      [LOOK_BACK - 1, LOOK_BACK].map((back) => {
        const messages: Message[] = [{ role: 'user', content: 'go' }];
        for (let i = back; i >= 0; i--) {
          const input = i === back || i === 0 ? { twin: true } : { i };
          messages.push({
            role: 'assistant',
            content: '',
            toolCalls: [{ toolCallId: `m${i}`, toolName: 'a', input }],
          } as Message);
        }
        return repeatsOneByOne(messages, ['m0'], key);
      }),
    );
  });

  it("computes no call's key for a run's first batch (nothing earlier to repeat)", () => {
    const calls: Call[] = Array.from({ length: 4000 }, (_, i) => ({
      toolCallId: `t1:c${i}`,
      toolName: 'a',
      input: { i },
    }));
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: calls },
    ] as Message[];
    let keys = 0;
    const counted = (tool: string, input: unknown) => {
      keys++;
      return key(tool, input);
    };
    expect(
      anyRepeatsEarlier(
        messages,
        calls.map((c) => c.toolCallId),
        counted,
      ),
    ).toBe(false);
    expect(keys).toBe(0);
  });
});

describe('findCalls', () => {
  it('finds each id in its newest holder, as findCall does, and leaves out unknown ids', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { messages, ids } = transcript(seed, 40);
      const found = findCalls(messages, [...ids, 'missing']);
      expect(found.has('missing')).toBe(false);
      for (const id of ids) expect(found.get(id)).toBe(findCall(messages, id));
    }
  });
});
