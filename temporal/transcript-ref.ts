/**
 * The transcript kept out of Temporal's history (issue 14; docs/temporal.md §History). A planner
 * turn's activity input is written into the workflow's history; with the whole transcript in it,
 * a run's history grows with the square of its steps (17 KB a step at 50 steps; a 500-step run
 * passes the 50 MB limit). So the workflow sends a reference instead: the messages new since its
 * previous planner turn (the tail), how many messages the transcript has, and a digest of them.
 * The worker keeps recent transcripts by run ({@link TranscriptCache}, `transcript-cache.ts`) and
 * reads what it lacks from the workflow itself with the `transcript` query, which writes nothing
 * to history. The digest guards the cache: a transcript that differs (a reset workflow, another
 * execution) never passes for the one referenced.
 *
 * This module is imported by the workflow bundle: no Node built-ins.
 *
 * @module
 */
import type { Message } from '../run/message.ts';

/** What a planner turn's activity gets in place of `context.messages`. */
export interface TranscriptRef {
  /** Messages in the transcript. */
  length: number;
  /** {@link chainDigest} over all `length` messages. */
  digest: string;
  /** Position of the first message of `tail`. */
  tailFrom: number;
  /** Messages `tailFrom … length − 1`: those the workflow has not sent since its last planner turn. */
  tail: Message[];
  /**
   * Messages `0 … archived.length − 1` are in the payload store, not in the workflow (the run
   * continued as new; {@link ArchivedTranscript}): a worker that lacks them reads them there, and
   * the rest up to `tailFrom` by query.
   */
  archived?: ArchivedTranscript;
}

/**
 * The start of a run's transcript as a chain of chunks in the payload store (docs/temporal.md
 * §History), written when the workflow continues as new so that what crosses to the next
 * execution does not grow with the run: each chunk holds the messages one execution added and the
 * reference of the chunk before it, so this reference is all a workflow carries, however long the run.
 */
export interface ArchivedTranscript {
  /** The store's key of the last chunk ({@link TranscriptChunk}). */
  key: string;
  /** Messages archived: positions `0 … length − 1`. */
  length: number;
  /** {@link chainDigest} over those `length` messages. */
  digest: string;
}

/** What one chunk of an archived transcript holds (its JSON is the stored value). */
export interface TranscriptChunk {
  /** Position of `messages[0]` in the transcript. */
  from: number;
  messages: Message[];
  /** The chunk before (positions `0 … from − 1`); absent for the first. */
  previous?: ArchivedTranscript;
}

/** The `transcript` query's answer: messages from a position, at most ~1 MB of JSON a page. */
export interface TranscriptPage {
  messages: Message[];
  /** The position after the last message of the page. */
  next: number;
}

/** The digest of an empty transcript. */
export const EMPTY_DIGEST = '0';

/**
 * The digest of a transcript after one more message: a 53-bit hash (cyrb53, public domain) of the
 * previous digest and the message's JSON. Chained, so appending costs O(message), not O(transcript).
 * Not cryptographic: it tells a cached transcript from another, it does not defend against forgery.
 */
export function chainDigest(previous: string, message: Message): string {
  const text = `${previous}\u0000${JSON.stringify(message)}`;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/**
 * Digests of every prefix of an append-only transcript: `at(n)` is the digest of its first `n`
 * messages. `extend` digests only the messages added since the last call. A transcript whose
 * first `from` messages are elsewhere (archived) starts from their digest: `extend` then takes
 * the messages from position `from` on, and positions stay the transcript's.
 */
export class PrefixDigests {
  readonly #digests: string[];

  constructor(
    readonly from = 0,
    digest = EMPTY_DIGEST,
  ) {
    this.#digests = [digest];
  }

  /**
   * Digests the messages of `messages` (positions `from …`) past those already digested; returns
   * the digest of the whole transcript.
   */
  extend(messages: readonly Message[]): string {
    for (let i = this.#digests.length - 1; i < messages.length; i++) {
      this.#digests.push(chainDigest(this.#digests[i]!, messages[i]!));
    }
    return this.#digests[messages.length]!;
  }

  /** The digest of the first `length` messages, if they were digested. */
  at(length: number): string | undefined {
    return this.#digests[length - this.from];
  }

  /** Forgets the digests past `length` (the transcript was replaced from there). */
  truncate(length: number): void {
    this.#digests.length = Math.max(1, Math.min(this.#digests.length, length - this.from + 1));
  }
}

/** Bytes of JSON a `transcript` query page holds at most (Temporal's payloads stop at 2–4 MB). */
export const TRANSCRIPT_PAGE_BYTES = 1_000_000;

/** One page of `messages` from `from`: at least one message, then up to {@link TRANSCRIPT_PAGE_BYTES}. */
export function transcriptPage(
  messages: readonly Message[],
  from: number,
  to = messages.length,
): TranscriptPage {
  const end = Math.min(to, messages.length);
  const page: Message[] = [];
  let bytes = 0;
  let next = Math.max(0, from);
  while (next < end) {
    const size = JSON.stringify(messages[next]).length;
    if (page.length > 0 && bytes + size > TRANSCRIPT_PAGE_BYTES) break;
    page.push(messages[next]!);
    bytes += size;
    next++;
  }
  return { messages: page, next };
}
