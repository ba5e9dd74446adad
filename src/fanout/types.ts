// The fan-out contract: committed events published once, delivered to every subscribed process.

export type Unsubscribe = () => Promise<void>;

export interface FanOut {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active, so nothing published afterwards is missed. */
  subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}
