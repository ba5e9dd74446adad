// Redis pub/sub fan-out across processes: one connection publishes, one subscribes and dispatches by channel.
import { Redis } from 'ioredis';
import type { FanOut, Unsubscribe } from './types.js';

export interface RedisFanOutOptions {
  url: string;
  /** Namespaces channels, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
}

export class RedisFanOut implements FanOut {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly prefix: string;
  private readonly handlers = new Map<string, Set<(message: string) => void>>();

  constructor(options: RedisFanOutOptions) {
    this.prefix = options.prefix ?? 'canon:events:';
    this.pub = new Redis(options.url, { maxRetriesPerRequest: 1 });
    this.sub = new Redis(options.url);
    for (const c of [this.pub, this.sub]) c.on('error', () => undefined);
    this.sub.on('message', (channel: string, message: string) => {
      for (const h of this.handlers.get(channel) ?? []) h(message);
    });
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.pub.publish(this.prefix + channel, message);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe> {
    const full = this.prefix + channel;
    let set = this.handlers.get(full);
    if (!set) {
      set = new Set();
      this.handlers.set(full, set);
      await this.sub.subscribe(full);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(full) === set) {
        this.handlers.delete(full);
        await this.sub.unsubscribe(full);
      }
    };
  }

  async close(): Promise<void> {
    this.handlers.clear();
    // quit() waits for a connection that may never come; a client that is not ready is just dropped.
    await Promise.all([this.pub, this.sub].map((c) => (c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : Promise.resolve(c.disconnect()))));
  }
}
