import { describe, expect, it } from 'vitest';
import type { Message } from '../run/message.ts';
import { TranscriptCache, TranscriptMismatchError } from './transcript-cache.ts';
import {
  chainDigest,
  EMPTY_DIGEST,
  PrefixDigests,
  TRANSCRIPT_PAGE_BYTES,
  type TranscriptRef,
  transcriptPage,
} from './transcript-ref.ts';

const user = (content: string): Message => ({ role: 'user', content });
const transcript = (n: number) => Array.from({ length: n }, (_, i) => user(`m${i}`));

/** What the workflow sends: the transcript's length and digest, and the messages from `tailFrom`. */
function refOf(messages: Message[], tailFrom: number): TranscriptRef {
  return {
    length: messages.length,
    digest: new PrefixDigests().extend(messages),
    tailFrom,
    tail: messages.slice(tailFrom),
  };
}

/** A workflow's `transcript` query over `messages`, counting the messages it hands out. */
function workflowOf(messages: Message[]) {
  const reads = { messages: 0 };
  const read = async (from: number, to: number) => {
    const page = transcriptPage(messages, from, to);
    reads.messages += page.messages.length;
    return page;
  };
  return { read, reads };
}

describe('transcript digests', () => {
  it('chain: a digest depends on every message and their order', () => {
    const a = chainDigest(chainDigest(EMPTY_DIGEST, user('a')), user('b'));
    const b = chainDigest(chainDigest(EMPTY_DIGEST, user('b')), user('a'));
    expect(a).not.toBe(b);
    expect(chainDigest(EMPTY_DIGEST, user('a'))).toBe(chainDigest(EMPTY_DIGEST, user('a')));
  });

  it('digests only what was appended, and knows every prefix', () => {
    const digests = new PrefixDigests();
    const messages = transcript(3);
    const three = digests.extend(messages);
    expect(digests.extend([...messages, user('x')])).toBe(chainDigest(three, user('x')));
    expect(digests.at(3)).toBe(three);
    expect(digests.at(0)).toBe(EMPTY_DIGEST);
  });
});

describe('transcriptPage', () => {
  it('pages by bytes, always at least one message', () => {
    const big = 'y'.repeat(TRANSCRIPT_PAGE_BYTES / 2);
    const messages = [user(big), user(big), user(big)];
    const first = transcriptPage(messages, 0);
    expect(first.messages).toHaveLength(1);
    expect(first.next).toBe(1);
    const huge = transcriptPage([user('z'.repeat(TRANSCRIPT_PAGE_BYTES * 2))], 0);
    expect(huge.messages).toHaveLength(1);
    expect(transcriptPage(transcript(10), 4, 6)).toEqual({ messages: transcript(10).slice(4, 6), next: 6 });
  });
});

describe('TranscriptCache', () => {
  it('reads a run it does not keep from the workflow, then needs only each turn’s tail', async () => {
    const cache = new TranscriptCache();
    const messages = transcript(5);
    const { read, reads } = workflowOf(messages);
    expect(await cache.resolve('r', refOf(messages, 3), read)).toEqual(messages);
    expect(reads.messages).toBe(3);

    const longer = [...messages, user('m5'), user('m6')];
    expect(await cache.resolve('r', refOf(longer, 5), workflowOf(longer).read)).toEqual(longer);
    expect(cache.readMessages).toBe(3);
  });

  it('does not take a cached transcript that differs from the reference (a reset run) for it', async () => {
    const cache = new TranscriptCache();
    const before = transcript(4);
    await cache.resolve('r', refOf(before, 0), workflowOf(before).read);
    const reset = [...before.slice(0, 2), user('other'), user('m3'), user('m4')];
    const { read, reads } = workflowOf(reset);
    expect(await cache.resolve('r', refOf(reset, 4), read)).toEqual(reset);
    expect(reads.messages).toBe(4);
  });

  it('fails when the workflow’s messages do not match the reference', async () => {
    const cache = new TranscriptCache();
    const messages = transcript(4);
    const ref = refOf(messages, 2);
    await expect(cache.resolve('r', ref, workflowOf(transcript(1)).read)).rejects.toBeInstanceOf(
      TranscriptMismatchError,
    );
    await expect(cache.resolve('r', ref, workflowOf([user('x'), user('y')]).read)).rejects.toBeInstanceOf(
      TranscriptMismatchError,
    );
  });

  it('keeps at most maxRuns runs, dropping the least recently used', async () => {
    const cache = new TranscriptCache(2);
    const messages = transcript(2);
    const { read } = workflowOf(messages);
    for (const run of ['a', 'b', 'a', 'c']) await cache.resolve(run, refOf(messages, 2), read);
    expect(cache.readMessages).toBe(6); // a, b, c read; a's second turn from the cache
    await cache.resolve('a', refOf(messages, 2), read);
    expect(cache.readMessages).toBe(6);
    await cache.resolve('b', refOf(messages, 2), read); // b was dropped
    expect(cache.readMessages).toBe(8);
  });
});
