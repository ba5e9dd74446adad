// The bytes of one GraphQL subscription on their way out: the hub's stream writes frames in, the SSE response reads them as graphql-sse's response body.
import type { StreamSink } from '../../events/stream.js';

/** Where the frames go once read: the HTTP response, whose own queue counts against the stream's buffer. */
export interface Outbound {
  readonly writableLength: number;
  destroy(): void;
}

/**
 * graphql-sse hands the HTTP layer a response body to read (an async generator of text); the hub writes to a
 * stream synchronously and checks its buffer after each frame (src/events/stream.ts). The channel joins the two:
 * written frames wait here until the response takes them, and what waits here or in the response's queue is the
 * stream's buffer, so a client that does not read is cut off at CANON_SSE_BUFFER_BYTES as on REST's stream.
 */
export class FrameChannel implements StreamSink {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private done = false;
  private wake: (() => void) | undefined;

  constructor(private readonly outbound: Outbound) {}

  write(chunk: string): boolean {
    if (this.done) return false;
    this.queue.push(chunk);
    this.queuedBytes += Buffer.byteLength(chunk);
    this.wake?.();
    return true;
  }

  buffered(): number {
    return this.queuedBytes + this.outbound.writableLength;
  }

  /** The body ends once what was written before is read. */
  end(): void {
    this.done = true;
    this.wake?.();
  }

  destroy(): void {
    this.outbound.destroy();
  }

  /**
   * The response body. Its `return` (the reader gone: the client disconnected) ends it at once, even while it waits
   * for a frame, and calls `onReturn`; a native generator's would wait for the pending frame first.
   */
  body(onReturn: () => void): AsyncGenerator<string, void, undefined> {
    const generator = (async function* (channel: FrameChannel) {
      for (;;) {
        while (channel.queue.length > 0) {
          const chunk = channel.queue.shift()!;
          channel.queuedBytes -= Buffer.byteLength(chunk);
          yield chunk;
        }
        if (channel.done) return;
        await new Promise<void>((resolve) => (channel.wake = resolve));
        channel.wake = undefined;
      }
    })(this);
    generator.return = async () => {
      this.done = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
      this.wake?.();
      onReturn();
      return { done: true, value: undefined };
    };
    return generator;
  }
}
