// When a request is sent again and how long the client waits first: the retry policy (DESIGN §7, §11), exponential backoff with full jitter, Retry-After (RFC 9110 §10.2.3).

/** The bounds of retrying; `createClient({ retries })` sets any of them. */
export interface RetryOptions {
  /** Tries in all, the first included (DESIGN §7). Default 4; 1 turns retrying off. */
  attempts?: number;
  /** The first backoff's ceiling; each later one doubles it (full jitter draws below the ceiling). Default 500 ms. */
  baseDelayMs?: number;
  /** The longest single wait. A `Retry-After` asking for more ends the retries (the error is thrown) rather than being cut short. Default 20 s. */
  maxDelayMs?: number;
  /** The longest a call may spend retrying, from its first try: no wait is started that would end past it. Default 60 s. */
  maxElapsedMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRIES: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxElapsedMs: 60_000 };

/** The policy with defaults filled in; a bound that is not a usable number is a TypeError at `createClient`. */
export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRIES, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as RetryPolicy;
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1)
    throw new TypeError(`retries.attempts must be an integer of at least 1 (it counts the first try), not ${String(policy.attempts)}`);
  for (const name of ['baseDelayMs', 'maxDelayMs', 'maxElapsedMs'] as const) {
    if (!Number.isFinite(policy[name]) || policy[name] < 0) throw new TypeError(`retries.${name} must be a number of milliseconds, not ${String(policy[name])}`);
  }
  return policy;
}

/**
 * The wait before try `attempt + 1` after `attempt` tries: "full jitter" (a uniform draw between 0 and the
 * exponential ceiling, capped), which spreads clients that failed together instead of bringing them back in step.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). A date is measured from the
 * answer's own `Date` header when it has one (the server's clock on both sides, so a skewed local clock does not
 * matter), else from now. Undefined when absent or unreadable; never negative.
 */
export function retryAfterMs(value: string | null, date: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  const served = date === null ? NaN : Date.parse(date);
  return Math.max(0, at - (Number.isNaN(served) ? now : served));
}

/**
 * Whether an error answer may be tried again, for any method: the server did not act on the request.
 * - 429 `RATE_LIMITED`: refused before it ran (DESIGN §11).
 * - 503: overload (refused before routing) or a busy store whose transaction rolled back (docs/architecture.md);
 *   5xx answers are never stored under an idempotency key (DESIGN §11), so nothing is replayed wrongly either.
 * - 409 `IDEMPOTENCY_KEY_IN_USE`: the first request with this key is still running; the retry, under the same key,
 *   gets its stored answer once it is done (DESIGN §11).
 * No other 4xx: the same request would get the same answer. Not 500 (a fault that a repeat rarely cures).
 */
export function retryableAnswer(status: number, code: string): boolean {
  return status === 429 || status === 503 || (status === 409 && code === 'IDEMPOTENCY_KEY_IN_USE');
}

/**
 * Whether a request whose fate is unknown (the connection failed or timed out, perhaps after the server acted) may
 * be sent again without risk of doing it twice:
 * - GET and HEAD are safe (RFC 9110 §9.2.1).
 * - POST carries an `Idempotency-Key` (the client adds one to every POST): a repeat replays the first answer and
 *   repeats no side effect (DESIGN §11, spec §4 "Idempotent creation").
 * - PUT and DELETE are idempotent (RFC 9110 §9.2.2, spec §4 "Method semantics"): a second replacement leaves the
 *   same state; a second DELETE may answer 404, which the client reads as done (`deleteGone`).
 * - PATCH is not idempotent (RFC 5789 §2, spec §4): a patch that moves a state or a counter must not run twice. It
 *   is sent again only with `If-Match`, which makes a repeat of an applied patch fail with 412 (RFC 9110 §13.1.1)
 *   instead of applying it again.
 */
export function retryableUnanswered(method: string, conditional: boolean): boolean {
  return method !== 'PATCH' || conditional;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 && !signal?.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
