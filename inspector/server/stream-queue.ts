import type { SSEStreamingApi } from 'hono/streaming';

/** Serializes a message once for every stream that sends it (keyed by the message object). */
export type Serialize = (data: unknown) => string;

/** A {@link Serialize} that remembers each object's text while the object lives. */
export function sharedSerializer(): Serialize {
  const serialized = new WeakMap<object, string>();
  return (data) => {
    if (data === null || typeof data !== 'object') return JSON.stringify(data);
    let text = serialized.get(data);
    if (text === undefined) {
      text = JSON.stringify(data);
      serialized.set(data, text);
    }
    return text;
  };
}

/** What a queue needs of its stream and server. */
export interface StreamQueueOptions {
  serialize: Serialize;
  /** Bytes queued (here and in Node's response buffer) past which the client is dropped. */
  maxBufferedBytes: number;
  /** Bytes Node holds for this response, unsent: where a client that does not read piles up. */
  unsentBytes(): number;
  /** Told why, once, when the client is dropped. */
  onDropped(reason: string): void;
  /** Ends the stream (the route's wait resolves). */
  stop(): void;
}

/**
 * One `/events` client's outgoing messages (issue 12 defect 6): written one at a time, in order;
 * a client more than `maxBufferedBytes` behind is sent `dropped` with the reason and its stream
 * ends; one that reads nothing at all, not even that, is cut off 5 s later (`stuck`).
 */
export class StreamQueue {
  private readonly queue: { event: string; text: string }[] = [];
  private queued = 0;
  private writing: Promise<void> | null = null;
  private dropped: string | null = null;
  /** The stream ended: nothing more is written. */
  ended = false;
  /** The client read nothing after being dropped: the route aborts its stream. */
  stuck = false;

  constructor(
    private readonly stream: SSEStreamingApi,
    private readonly options: StreamQueueOptions,
  ) {}

  /** Whether nothing waits to be written (the heartbeat writes only then). */
  get idle(): boolean {
    return this.queue.length === 0 && this.writing === null;
  }

  /** Queues one SSE message; drops the client when it is too far behind. */
  send(event: string, data: unknown): void {
    if (this.dropped || this.ended) return;
    const text = this.options.serialize(data);
    this.queued += text.length;
    if (this.queued + this.options.unsentBytes() > this.options.maxBufferedBytes) {
      this.drop();
      return;
    }
    this.queue.push({ event, text });
    void this.pump();
  }

  private drop(): void {
    // Too far behind: forget what it has not been sent, tell it why, end the stream.
    const reason = `this page fell more than ${Math.round(this.options.maxBufferedBytes / 1024)} KiB of updates behind and was disconnected (maxSseBufferedBytes)`;
    this.dropped = reason;
    this.options.onDropped(reason);
    this.queue.length = 0;
    this.queued = 0;
    this.queue.push({ event: 'dropped', text: JSON.stringify({ reason }) });
    void this.pump().then(() => this.options.stop());
    // A client that reads nothing at all never takes even that: cut it off.
    setTimeout(() => {
      this.stuck = true;
      this.options.stop();
    }, 5000).unref();
  }

  // One write at a time, in order; resolves when the queue is empty.
  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.ended) {
      const next = this.queue.shift()!;
      this.queued -= next.text.length;
      await this.stream.writeSSE({ event: next.event, data: next.text }).catch(() => undefined);
    }
  }

  private pump(): Promise<void> {
    // Cleared in a later microtask, after the assignment, even when nothing was to be written.
    this.writing ??= this.drain().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }
}
