/**
 * Large tool results by reference (issue 26 item 3; docs/temporal.md §History). Temporal writes
 * every activity's output into the workflow's history, a payload stops at 2 MB (4 MB for a whole
 * workflow task), and what the run keeps (its transcript, its last results) crosses every
 * continue-as-new. So a tool result over `inlineBytes` leaves the activity as a reference: the
 * worker writes the result's JSON to a {@link PayloadStore} every worker can read (a shared
 * folder, a bucket, a table), and the run carries `{ $toolwardenPayload: key, bytes }` in its
 * place. The activities that need the value (a planner turn, the policy review) read it back; a
 * client with the store reads it back in `result()`. Without a store, a result over
 * `maxInlineBytes` becomes an error result saying so (the planner sees it), never a workflow
 * task that fails for ever.
 *
 * @module
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message } from '../run/message.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';

/** Where large results live: any store every worker (and the client reading results) can reach. */
export interface PayloadStore {
  /** Stores `json` under `key` (a later put of the same key replaces it: a retried call). */
  put(key: string, json: string): Promise<void>;
  /** The JSON stored under `key`, or undefined. */
  get(key: string): Promise<string | undefined>;
}

/** What a run carries in place of a stored result. */
export interface PayloadRef {
  $toolwardenPayload: string;
  /** Bytes of the stored JSON. */
  bytes: number;
}

/** `createTemporalWorker({ payloads })`. */
export interface PayloadOptions {
  store?: PayloadStore;
  /** Results whose JSON is longer go to the store, bytes. Default 16 384. */
  inlineBytes?: number;
  /**
   * Without a store: results whose JSON is longer become an error result (`PayloadTooLargeError`),
   * bytes. Default 262 144 (a run's continue-as-new input and results stay far below 2 MB).
   */
  maxInlineBytes?: number;
}

export const DEFAULT_INLINE_BYTES = 16_384;
export const DEFAULT_MAX_INLINE_BYTES = 262_144;

export function isPayloadRef(value: unknown): value is PayloadRef {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { $toolwardenPayload?: unknown }).$toolwardenPayload === 'string'
  );
}

/** A store in a folder (one file per key): every worker on the machine, or on a shared mount. */
export function folderPayloadStore(dir: string): PayloadStore {
  const path = (key: string) => join(dir, `${encodeURIComponent(key)}.json`);
  let made: Promise<unknown> | undefined;
  return {
    async put(key, json) {
      made ??= mkdir(dir, { recursive: true });
      await made;
      // Written whole, then renamed: a reader never sees half a result.
      const temporary = `${path(key)}.${process.pid}.${Date.now()}.tmp`;
      await writeFile(temporary, json);
      await rename(temporary, path(key));
    },
    async get(key) {
      try {
        return await readFile(path(key), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
  };
}

/** A store in memory: one process (a worker and its client in a test, or a single-process app). */
export function memoryPayloadStore(): PayloadStore {
  const values = new Map<string, string>();
  return {
    put: async (key, json) => {
      values.set(key, json);
    },
    get: async (key) => values.get(key),
  };
}

/** Thrown when a referenced result is not in the store (a store not shared by every worker). */
export class PayloadMissingError extends Error {
  override readonly name = 'PayloadMissingError';
}

/**
 * Puts results over the inline limit in the store, and reads references back, keeping what it
 * read (up to `cacheBytes`, least recently used dropped) so a planner turn of a long run does not
 * read its whole transcript's results again.
 */
export class Payloads {
  readonly #store: PayloadStore | undefined;
  readonly #inline: number;
  readonly #maxInline: number;
  readonly #cache = new Map<string, { value: unknown; bytes: number }>();
  #cached = 0;

  constructor(
    options: PayloadOptions = {},
    readonly cacheBytes = 64 * 1024 * 1024,
  ) {
    this.#store = options.store;
    this.#inline = options.inlineBytes ?? DEFAULT_INLINE_BYTES;
    this.#maxInline = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
  }

  /** The store, when the worker has one (the transcript's archive goes there too: `transcript-archive.ts`). */
  get store(): PayloadStore | undefined {
    return this.#store;
  }

  /** The result as the run carries it: its value by reference when large, or an error when too large. */
  async outgoing(result: ToolResultJSON): Promise<ToolResultJSON> {
    if (result.result === undefined || result.error) return result;
    const json = JSON.stringify(result.result);
    const bytes = Buffer.byteLength(json);
    if (bytes <= this.#inline) return result;
    if (this.#store) {
      const key = result.toolCallId;
      await this.#store.put(key, json);
      this.#remember(key, result.result, bytes);
      return { ...result, result: { $toolwardenPayload: key, bytes } satisfies PayloadRef };
    }
    if (bytes <= this.#maxInline) return result;
    const { result: _dropped, ...rest } = result;
    return {
      ...rest,
      error: {
        name: 'PayloadTooLargeError',
        message: `The result of ${result.name} is ${bytes} bytes, over the ${this.#maxInline} a run on Temporal carries without a payload store; nothing of it was kept (createTemporalWorker({ payloads: { store } }), docs/temporal.md §History)`,
        recoverable: false,
      },
    } as ToolResultJSON;
  }

  /** The value a reference stands for (anything else as it is). */
  async value(value: unknown): Promise<unknown> {
    if (!isPayloadRef(value)) return value;
    const key = value.$toolwardenPayload;
    const hit = this.#cache.get(key);
    if (hit) {
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      return hit.value;
    }
    const json = this.#store ? await this.#store.get(key) : undefined;
    if (json === undefined) {
      throw new PayloadMissingError(
        `Result ${key} is stored by reference and ${this.#store ? 'not in this payload store' : 'this process has no payload store'}: every worker and the client reading results need the same store`,
      );
    }
    const resolved = JSON.parse(json) as unknown;
    this.#remember(key, resolved, value.bytes);
    return resolved;
  }

  /** Messages with each tool message's referenced content read back (the same array when none is). */
  async messages(messages: Message[]): Promise<Message[]> {
    if (!messages.some((message) => message.role === 'tool' && isPayloadRef(message.content)))
      return messages;
    return Promise.all(
      messages.map(async (message) =>
        message.role === 'tool' && isPayloadRef(message.content)
          ? ({ ...message, content: await this.value(message.content) } as Message)
          : message,
      ),
    );
  }

  /** Results with their referenced values read back. */
  async results<T extends ToolResultJSON | null>(results: T[]): Promise<T[]> {
    if (!results.some((result) => isPayloadRef(result?.result))) return results;
    return Promise.all(
      results.map(async (result) =>
        result && isPayloadRef(result.result)
          ? { ...result, result: await this.value(result.result) }
          : result,
      ),
    );
  }

  #remember(key: string, value: unknown, bytes: number): void {
    if (bytes > this.cacheBytes) return;
    this.#cache.set(key, { value, bytes });
    this.#cached += bytes;
    for (const [oldest, entry] of this.#cache) {
      if (this.#cached <= this.cacheBytes) break;
      this.#cache.delete(oldest);
      this.#cached -= entry.bytes;
    }
  }
}
