import type { Message } from '../run/message.ts';
import {
  type ArchivedTranscript,
  chainDigest,
  PrefixDigests,
  type TranscriptPage,
  type TranscriptRef,
} from './transcript-ref.ts';

/** Thrown when the transcript read from the workflow does not match the reference's digest. */
export class TranscriptMismatchError extends Error {
  override readonly name = 'TranscriptMismatchError';
}

/** Reads messages `from … to − 1` of a run's transcript, a page at a time (the `transcript` query). */
export type ReadTranscript = (from: number, to: number) => Promise<TranscriptPage>;

/** Reads the messages an archived transcript holds, from the payload store (`transcript-archive.ts`). */
export type ReadArchived = (archived: ArchivedTranscript) => Promise<Message[]>;

/** Messages `from … to − 1` read from the workflow a page at a time (fewer if it has fewer). */
export async function readRange(read: ReadTranscript, from: number, to: number): Promise<Message[]> {
  const messages: Message[] = [];
  while (from + messages.length < to) {
    const page = await read(from + messages.length, to);
    if (page.messages.length === 0) break;
    messages.push(...page.messages);
  }
  return messages;
}

interface Entry {
  messages: Message[];
  digests: PrefixDigests;
}

/**
 * The transcripts of recent runs in a worker (docs/temporal.md §History), so a planner turn's
 * activity needs only the messages new since the run's previous turn ({@link TranscriptRef}). A run
 * whose turns land on several workers, or a worker that restarted, reads the rest from the
 * workflow with the `transcript` query. Least recently used runs are dropped past `maxRuns`.
 */
export class TranscriptCache {
  readonly #runs = new Map<string, Entry>();
  /** Messages read from workflows (cache misses), for tests and benches. */
  readMessages = 0;

  constructor(readonly maxRuns = 256) {}

  /**
   * The full transcript `ref` stands for.
   *
   * @throws TranscriptMismatchError when the messages read from the workflow do not have the
   *   reference's digest (the activity fails and Temporal retries it).
   */
  async resolve(
    runId: string,
    ref: TranscriptRef,
    read: ReadTranscript,
    readArchived?: ReadArchived,
  ): Promise<Message[]> {
    const cached = this.#runs.get(runId);
    if (cached) {
      this.#runs.delete(runId);
      const hit = this.#extend(cached, ref);
      if (hit) {
        this.#remember(runId, cached);
        return hit;
      }
    }
    // The messages archived when the run continued as new are no longer in the workflow.
    const prefix: Message[] = ref.archived && readArchived ? await readArchived(ref.archived) : [];
    prefix.push(...(await readRange(read, prefix.length, ref.tailFrom)));
    this.readMessages += prefix.length;
    const messages = prefix.concat(ref.tail);
    const digests = new PrefixDigests();
    if (messages.length !== ref.length || digests.extend(messages) !== ref.digest) {
      throw new TranscriptMismatchError(
        `Run ${runId}: the transcript read from the workflow (${messages.length} messages) does not match the turn's reference (${ref.length} messages, digest ${ref.digest})`,
      );
    }
    this.#remember(runId, { messages, digests });
    return messages;
  }

  /** The transcript with `ref`'s tail, when the cached one is the prefix it references. */
  #extend(entry: Entry, ref: TranscriptRef): Message[] | undefined {
    if (entry.messages.length < ref.tailFrom || ref.tailFrom + ref.tail.length !== ref.length) return;
    let digest = entry.digests.at(ref.tailFrom);
    if (digest === undefined) return;
    for (const message of ref.tail) digest = chainDigest(digest, message);
    if (digest !== ref.digest) return;
    entry.messages = entry.messages.slice(0, ref.tailFrom).concat(ref.tail);
    entry.digests.truncate(ref.tailFrom);
    entry.digests.extend(entry.messages);
    return entry.messages;
  }

  #remember(runId: string, entry: Entry): void {
    this.#runs.set(runId, entry);
    if (this.#runs.size > this.maxRuns) this.#runs.delete(this.#runs.keys().next().value!);
  }

  /**
   * Messages `from … to − 1` of the run's transcript as this worker holds it, if the first `to`
   * messages it holds have `digest` (else undefined: read them from the workflow).
   */
  held(runId: string, from: number, to: number, digest: string): Message[] | undefined {
    const entry = this.#runs.get(runId);
    if (!entry || entry.digests.at(to) !== digest) return undefined;
    return entry.messages.slice(from, to);
  }

  /** Forgets a run (its last turn is done). */
  forget(runId: string): void {
    this.#runs.delete(runId);
  }
}
