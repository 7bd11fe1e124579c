import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { InspectionStore, InspectorMessage, RunPage } from '../inspection-store.ts';
import { type Serialize, StreamQueue, sharedSerializer } from './stream-queue.ts';

/** What the `/events` streams need besides the store. */
export interface EventStreamOptions {
  /** Live streams at once; more get 503. */
  maxClients: number;
  /** Bytes one client may fall behind before it is dropped. */
  maxBufferedBytes: number;
  /** SSE comment interval keeping idle streams open, ms. */
  heartbeatMs: number;
  /** The `hello`'s page of run summaries. */
  firstPage(): RunPage;
  /** Called as each page connects, before its `hello`. */
  onClient?: () => void;
}

/**
 * `GET /events`, the page's Server-Sent Events (issue 12 defect 6, issue 27 item 1): `hello` (a
 * page of run summaries, and why the page's earlier stream was dropped, if it was), then `run`,
 * `update`, `removed` for every run, and `log` and `context` only for the run this stream opened
 * ({@link EventStreams.open}). Each message is serialized once for every client, clients are
 * capped (`maxClients`, then 503), and a client too far behind is dropped, told why.
 */
export class EventStreams {
  private readonly serialize: Serialize = sharedSerializer();
  /** Open streams by id: which run each one has open. */
  private readonly streams = new Map<string, { open: (key: string | null) => void }>();
  /** Why a page's earlier stream was dropped, by the page's `client` id: its next `hello` says so. */
  private readonly droppedClients = new Map<string, string>();
  /** Ends each open stream (on close). */
  private readonly closers = new Set<() => void>();
  private clients = 0;

  constructor(
    private readonly store: InspectionStore,
    private readonly options: EventStreamOptions,
  ) {}

  /** Points stream `streamId` (a `hello`'s `stream`) at run `key`; an unknown id does nothing. */
  open(streamId: string, key: string): void {
    this.streams.get(streamId)?.open(key);
  }

  /** Ends every open stream. */
  closeAll(): void {
    for (const close of this.closers) close();
    this.closers.clear();
  }

  /** Adds `GET /events` to the app. */
  route(app: Hono): void {
    app.get('/events', (c) => {
      if (this.clients >= this.options.maxClients) {
        return c.text(
          `Too many live inspector streams (at most ${this.options.maxClients}); close another page\n`,
          503,
        );
      }
      this.clients++;
      this.options.onClient?.();
      const client = (c.req.query('client') ?? '').slice(0, 64);
      const outgoing = (c.env as { outgoing?: { writableLength?: number } } | undefined)?.outgoing;
      return streamSSE(c, async (stream) => {
        let stop: () => void = () => {};
        const queue = new StreamQueue(stream, {
          serialize: this.serialize,
          maxBufferedBytes: this.options.maxBufferedBytes,
          unsentBytes: () => outgoing?.writableLength ?? 0,
          onDropped: (reason) => this.rememberDropped(client, reason),
          stop: () => stop(),
        });
        const ended = new Promise<void>((resolve) => {
          stop = resolve;
          stream.onAbort(resolve);
          this.closers.add(resolve);
        });
        const release = this.follow(queue, client);
        const heartbeat = setInterval(() => {
          if (queue.idle) void stream.write(': ping\n\n').catch(() => undefined);
        }, this.options.heartbeatMs);
        await ended;
        this.closers.delete(stop);
        queue.ended = true;
        this.clients--;
        clearInterval(heartbeat);
        release();
        if (queue.stuck) stream.abort();
      });
    });
  }

  /** Subscribes a new stream and sends its `hello`; returns what undoes both. */
  private follow(queue: StreamQueue, client: string): () => void {
    const id = randomBytes(9).toString('base64url');
    let watched = null as { key: string; release: () => void } | null;
    this.streams.set(id, {
      open: (key) => {
        watched?.release();
        watched = key === null ? null : { key, release: this.store.watch(key) };
      },
    });
    // Subscribe and take the hello in the same tick: nothing can fall between them.
    const unsubscribe = this.store.subscribe((message: InspectorMessage) => {
      if ((message.type === 'log' || message.type === 'context') && message.key !== watched?.key) return;
      queue.send(message.type, message);
    });
    const earlier = client ? this.droppedClients.get(client) : undefined;
    if (client) this.droppedClients.delete(client);
    queue.send('hello', {
      stream: id,
      ...this.options.firstPage(),
      ...(earlier === undefined ? {} : { droppedBefore: earlier }),
    });
    return () => {
      unsubscribe();
      watched?.release();
      this.streams.delete(id);
    };
  }

  private rememberDropped(client: string, reason: string): void {
    if (!client) return;
    this.droppedClients.set(client, reason);
    if (this.droppedClients.size > 256) this.droppedClients.delete(this.droppedClients.keys().next().value!);
  }
}
