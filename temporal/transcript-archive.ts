/**
 * A run's transcript archived in the payload store when its workflow continues as new (issue 26
 * item 3; docs/temporal.md §History). Without it the next execution's input carried the whole
 * transcript (~0.35 KB a step with large results by reference), so a run of ~4,000 steps passed
 * Temporal's 2 MB payload limit. At continue-as-new the workflow asks a worker (the
 * `archiveTranscript` activity, whose input and output are a few numbers and keys) to write the
 * messages its execution settled as one {@link TranscriptChunk} that points at the chunk before;
 * the next execution carries only the last chunk's {@link ArchivedTranscript}. A worker that lacks
 * a run's transcript reads the chain back, then the rest from the workflow by query.
 *
 * @module
 */
import type { Message } from '../run/message.ts';
import { PayloadMissingError, type PayloadStore } from './payload-store.ts';
import { TranscriptMismatchError } from './transcript-cache.ts';
import {
  type ArchivedTranscript,
  chainDigest,
  EMPTY_DIGEST,
  type TranscriptChunk,
} from './transcript-ref.ts';

/** The `archiveTranscript` activity's input: archive messages `from … to − 1`, whose first `to` have `digest`. */
export interface ArchiveTranscriptInput {
  runId: string;
  from: number;
  to: number;
  digest: string;
  /** Where messages `0 … from − 1` are (absent when `from` is 0). */
  previous?: ArchivedTranscript;
}

/**
 * Writes messages `from … to − 1` as a chunk after `previous`, once they are checked against the
 * digest the workflow gave. The key names the run, the position and the digest: a retried
 * activity writes the same chunk again, and no other run's chunk has it.
 *
 * @throws TranscriptMismatchError when the messages are not the ones the digest stands for.
 */
export async function archiveChunk(
  store: PayloadStore,
  input: ArchiveTranscriptInput,
  messages: Message[],
): Promise<ArchivedTranscript> {
  let digest = input.previous?.digest ?? EMPTY_DIGEST;
  for (const message of messages) digest = chainDigest(digest, message);
  if (messages.length !== input.to - input.from || digest !== input.digest) {
    throw new TranscriptMismatchError(
      `Run ${input.runId}: messages ${input.from}–${input.to} to archive (${messages.length} read) do not match the workflow's digest ${input.digest}`,
    );
  }
  const chunk: TranscriptChunk = {
    from: input.from,
    messages,
    ...(input.previous ? { previous: input.previous } : {}),
  };
  const key = `${input.runId}.transcript.${input.to}.${digest}`;
  await store.put(key, JSON.stringify(chunk));
  return { key, length: input.to, digest };
}

/**
 * The messages `archived` stands for, read chunk by chunk from the last back to the first.
 *
 * @throws PayloadMissingError when a chunk is not in the store (a store not shared by every worker).
 */
export async function readArchived(
  store: PayloadStore | undefined,
  archived: ArchivedTranscript,
): Promise<Message[]> {
  const chunks: Message[][] = [];
  let at: ArchivedTranscript | undefined = archived;
  while (at) {
    const json = store ? await store.get(at.key) : undefined;
    if (json === undefined) {
      throw new PayloadMissingError(
        `The transcript's messages 0–${at.length} are archived as ${at.key} and ${store ? 'not in this payload store' : 'this worker has no payload store'}: every worker needs the same store`,
      );
    }
    const chunk = JSON.parse(json) as TranscriptChunk;
    chunks.push(chunk.messages);
    at = chunk.previous;
  }
  return chunks.reverse().flat();
}
