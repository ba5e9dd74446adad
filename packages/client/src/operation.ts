// A 202's operation handle (DESIGN §9, spec §7 "202 Accepted"): the status location, and done() polling it until the operation leaves its in-flight state.
import { OperationFailedError, OperationTimeoutError } from './errors.js';
import { bodyOf } from './response-info.js';
import { retryAfterMs, sleep } from './retry.js';
import type { Reply, Transport } from './transport.js';

export interface DoneOptions {
  /** How long to wait for the outcome, in ms. Default 60 s; past it, OperationTimeoutError (the operation may still finish). */
  timeout?: number;
  /** The first wait between polls when the server gives no `Retry-After`; each later one doubles, up to 5 s. Default 200 ms. */
  interval?: number;
  signal?: AbortSignal;
}

/** An accepted asynchronous operation: `A` is the 202's body, `F` the final state `done()` resolves with. */
export interface Operation<A, F> {
  /** The 202's `status` (`processing`; a webhook delivery's `pending`). */
  readonly status: A extends { status: infer S } ? S : unknown;
  /** The 202's body. */
  readonly body: A;
  /** Where the outcome is read (the 202's `Location`). */
  readonly location: string;
  /** Polls `location` until the operation is no longer in flight: resolves with its final state, or throws OperationFailedError (`failed`) or OperationTimeoutError. */
  done(options?: DoneOptions): Promise<F>;
}

/** The states an operation is still in flight in: a payment's `processing`, a webhook delivery's `pending`. */
const IN_FLIGHT: ReadonlySet<unknown> = new Set(['processing', 'pending']);
const MAX_INTERVAL_MS = 5000;

function statusOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as { status?: unknown }).status : undefined;
}

export function operationOf<A, F>(transport: Transport, reply: Reply): Operation<A, F> {
  const location = reply.headers.get('location');
  if (location === null) throw new TypeError(`the ${reply.status} answer of ${reply.url} has no Location to read the outcome at`);
  const accepted = bodyOf(reply) as A;
  const firstWait = retryAfterMs(reply.headers.get('retry-after'), reply.headers.get('date'), Date.now());
  return {
    status: statusOf(accepted) as Operation<A, F>['status'],
    body: accepted,
    location,
    async done(options: DoneOptions = {}): Promise<F> {
      const timeout = options.timeout ?? 60_000;
      let interval = options.interval ?? 200;
      const deadline = Date.now() + timeout;
      let asked = firstWait;
      let wait = asked ?? interval;
      let state: unknown = accepted;
      for (;;) {
        const left = Math.max(0, deadline - Date.now());
        // A Retry-After past the deadline: the server says the outcome will not be there in time, so no early poll.
        if (asked !== undefined && asked > left) throw new OperationTimeoutError(location, timeout, state);
        // Otherwise the last poll happens at the deadline rather than never: a wait never runs past it.
        await sleep(Math.min(wait, left), options.signal);
        const polled = await transport.send({ method: 'GET', url: location, signal: options.signal });
        state = bodyOf(polled);
        const status = statusOf(state);
        if (!IN_FLIGHT.has(status)) {
          if (status === 'failed') throw new OperationFailedError(location, state, (state as { error?: string }).error);
          return state as F;
        }
        if (Date.now() >= deadline) throw new OperationTimeoutError(location, timeout, state);
        interval = Math.min(interval * 2, MAX_INTERVAL_MS);
        asked = retryAfterMs(polled.headers.get('retry-after'), polled.headers.get('date'), Date.now());
        wait = asked ?? interval;
      }
    },
  };
}
