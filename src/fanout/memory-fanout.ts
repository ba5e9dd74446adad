// In-process fan-out for a single process: an EventEmitter per channel name.
import { EventEmitter } from 'node:events';
import type { FanOut, Unsubscribe } from './types.js';

export class MemoryFanOut implements FanOut {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every SSE client is a listener; the count is bounded by connections, not by a fixed number.
    this.emitter.setMaxListeners(0);
  }

  async publish(channel: string, message: string): Promise<void> {
    this.emitter.emit(channel, message);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe> {
    this.emitter.on(channel, handler);
    return async () => {
      this.emitter.off(channel, handler);
    };
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
