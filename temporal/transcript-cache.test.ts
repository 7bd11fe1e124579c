import { describe, expect, it } from 'vitest';
import type { Message } from '../run/message.ts';
import { memoryPayloadStore, PayloadMissingError, type PayloadStore } from './payload-store.ts';
import { archiveChunk, readArchived } from './transcript-archive.ts';
import { TranscriptCache, TranscriptMismatchError } from './transcript-cache.ts';
import {
  type ArchivedTranscript,
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

describe('the transcript archived at continue-as-new', () => {
  /** Archives `messages` in chunks ending at `ends`, as successive executions would. */
  async function archived(store: PayloadStore, messages: Message[], ends: number[]) {
    let previous: ArchivedTranscript | undefined;
    const digests = new PrefixDigests();
    digests.extend(messages);
    for (const to of ends) {
      const from = previous?.length ?? 0;
      previous = await archiveChunk(
        store,
        { runId: 'r', from, to, digest: digests.at(to)!, ...(previous ? { previous } : {}) },
        messages.slice(from, to),
      );
    }
    return previous!;
  }

  it('reads the chain of chunks back in order, then the rest from the workflow', async () => {
    const store = memoryPayloadStore();
    const messages = transcript(12);
    const last = await archived(store, messages, [3, 4, 9]);
    expect(last.length).toBe(9);
    expect(await readArchived(store, last)).toEqual(messages.slice(0, 9));

    // The workflow holds messages 9 … 11 only; a worker without the run reads 0 … 8 from the store.
    const cache = new TranscriptCache();
    const reads: number[] = [];
    const read = async (from: number, to: number) => {
      reads.push(from);
      if (from < 9) return { messages: [], next: from };
      const page = transcriptPage(messages.slice(9), from - 9, to - 9);
      return { messages: page.messages, next: page.next + 9 };
    };
    const ref = { ...refOf(messages, 11), archived: last };
    const got = await cache.resolve('r', ref, read, (at) => readArchived(store, at));
    expect(got).toEqual(messages);
    expect(reads).toEqual([9]);
    expect(cache.held('r', 9, 12, ref.digest)).toEqual(messages.slice(9));
    expect(cache.held('r', 9, 12, 'other')).toBeUndefined();
  });

  it('refuses to archive messages that are not the ones the digest stands for', async () => {
    const store = memoryPayloadStore();
    const messages = transcript(4);
    const digest = new PrefixDigests().extend(messages);
    await expect(
      archiveChunk(store, { runId: 'r', from: 0, to: 4, digest }, [...messages.slice(0, 3), user('x')]),
    ).rejects.toBeInstanceOf(TranscriptMismatchError);
    await expect(readArchived(store, { key: 'r.transcript.4.x', length: 4, digest })).rejects.toBeInstanceOf(
      PayloadMissingError,
    );
  });

  it('digests of a transcript whose start is archived keep the transcript’s positions', () => {
    const messages = transcript(6);
    const whole = new PrefixDigests();
    whole.extend(messages);
    const rest = new PrefixDigests(4, whole.at(4));
    expect(rest.extend(messages.slice(4))).toBe(whole.at(6));
    expect(rest.at(5)).toBe(whole.at(5));
    expect(rest.at(3)).toBeUndefined();
  });
});
