import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC code of the error answered in place of a message over the size limit (in the range
 * JSON-RPC leaves to implementations; read by `toToolFailure`).
 */
export const MESSAGE_TOO_LARGE = -32097;

/**
 * The newline-delimited reader of a stdio server's output, in place of the SDK's `ReadBuffer`
 * (1.32), which copies its whole buffer on every 64 KiB chunk and scans it again for a newline
 * (an 11 MiB result took 4.5 s to arrive) and, over its limit, closes the transport: the server
 * process is killed and every call in flight on it fails. Here each byte is copied and scanned
 * once, and a message over `maxBytes` is skipped to its newline without being kept: the id at its
 * end answers the call it belonged to with a {@link MESSAGE_TOO_LARGE} error, and the process
 * and the other calls go on.
 */
export class StdioReadBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Skipping a message over the limit: its bytes so far, and its last bytes (where its id is). */
  private skipping: { bytes: number; tail: string } | undefined;
  /** Whole lines not yet parsed, and errors answered for skipped messages, in arrival order. */
  private readonly queue: (string | JSONRPCMessage)[] = [];

  constructor(
    private readonly maxBytes: number,
    private readonly parse: (line: string) => JSONRPCMessage,
  ) {}

  append(chunk: Buffer): void {
    let rest = chunk;
    for (let newline = rest.indexOf(10); newline !== -1; newline = rest.indexOf(10)) {
      this.take(rest.subarray(0, newline));
      this.endLine();
      rest = rest.subarray(newline + 1);
    }
    this.take(rest);
  }

  /** The next whole message, or null. @throws what `parse` throws for a line that is not JSON-RPC. */
  readMessage(): JSONRPCMessage | null {
    const next = this.queue.shift();
    if (next === undefined) return null;
    return typeof next === 'string' ? this.parse(next) : next;
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = undefined;
    this.queue.length = 0;
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping === undefined && this.size + part.length > this.maxBytes) {
      this.skipping = { bytes: this.size, tail: '' };
      this.chunks = [];
      this.size = 0;
    }
    if (this.skipping !== undefined) {
      this.skipping.bytes += part.length;
      this.skipping.tail = (this.skipping.tail + part.subarray(-64).toString('latin1')).slice(-64);
      return;
    }
    this.chunks.push(part);
    this.size += part.length;
  }

  private endLine(): void {
    if (this.skipping !== undefined) {
      const { bytes, tail } = this.skipping;
      this.skipping = undefined;
      const id = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$/.exec(tail)?.[1];
      if (id !== undefined) {
        this.queue.push({
          jsonrpc: '2.0',
          id: JSON.parse(id) as string | number,
          error: {
            code: MESSAGE_TOO_LARGE,
            message: `the server's answer was ${bytes} bytes, over the ${this.maxBytes}-byte limit; it was dropped unread`,
          },
        } as JSONRPCMessage);
      }
      return;
    }
    const line = Buffer.concat(this.chunks, this.size).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line.length > 0) this.queue.push(line);
  }
}
