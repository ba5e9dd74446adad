// openEventStream: Canon's event stream (GET /events as text/event-stream, DESIGN §9) as an async iterator that resumes with Last-Event-ID (WHATWG HTML §9.2).
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { CanonError, type ErrorObject } from './errors.js';
import type { CanonEvent } from './event.js';

export interface EventStreamOptions {
  /** The stream's URL: the server's `/events` (absolute). `after` and `type` are added to its query. */
  url: string;
  /** The `fetch` to use (the global one, or one that adds a proxy, a dispatcher, logging…). */
  fetch: typeof fetch;
  /** The credentials' headers, asked anew before every connection (so a refreshed token is used on a reconnect); what it throws ends the iteration. */
  headers: () => Promise<Record<string, string>>;
  /** Start after this event id (an event already handled); without it the stream starts with the next event written. */
  after?: string;
  /** Only these event types (`order.*`: `*` matches any characters), sent as the comma list the server takes. */
  type?: string | string[];
  /** Aborting it ends the iteration (no error): the connection is closed and no reconnection is made. */
  signal?: AbortSignal;
  reconnect?: ReconnectOptions;
}

export interface ReconnectOptions {
  /** The longest wait between two attempts while they keep failing (default 30 s); the server's `retry:` and `Retry-After` are waited out in full. */
  maxDelayMs?: number;
  /**
   * How many connection attempts in a row may fail (no answer, or 429/502/503/504) before the iteration ends
   * with the last error; a stream that connects resets the count. Default: no bound, like a browser's
   * EventSource: the stream follows the server through restarts until `signal` aborts it.
   */
  maxAttempts?: number;
}

/** The reconnection time before the server's `retry:` field is seen (WHATWG HTML §9.2.2 leaves it to the client; browsers use about 3 s). */
const DEFAULT_RETRY_MS = 3_000;
const DEFAULT_MAX_DELAY_MS = 30_000;
/**
 * The most characters one frame may hold before the stream is refused: the parser would otherwise buffer a
 * frame without end (eventsource-parser's `maxBufferSize`). Canon's frames are one JSON event each; an update
 * carries its object twice (object and previous_attributes), far below this.
 */
const MAX_FRAME_CHARS = 8 * 1024 * 1024;
/** Answers that say "not now" rather than "never": retried with backoff, honouring Retry-After (RFC 9110 §10.2.3, §15.6.4). */
const TRANSIENT = new Set([429, 502, 503, 504]);
/** setTimeout's largest delay (a signed 32-bit count of milliseconds); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Follows the stream: each event as it is written, across disconnects and server restarts. After a disconnect
 * it waits the server's `retry:` time and reconnects with `Last-Event-ID` set to the last event yielded, so the
 * server resumes right after it (nothing lost); events at or below the last yielded `sequence` are skipped
 * (nothing doubled). When attempts keep failing the waits grow exponentially with jitter up to `maxDelayMs`;
 * a 429 or 503 waits its `Retry-After`. Any other error answer (400 for an unknown `after`, 401, 403…) ends the
 * iteration with a {@link CanonError}, as does a response that is not an event stream. Breaking out of the
 * `for await` loop or aborting `signal` closes the connection.
 *
 * Before the first event arrives there is no id to resume from: a stream opened without `after` that loses its
 * connection before any event starts again at the newest event (what was written in between is in `GET /events`).
 */
export function openEventStream<TEvent extends CanonEvent = CanonEvent>(options: EventStreamOptions): AsyncGenerator<TEvent, void, undefined> {
  const url = streamUrl(options.url, options.after, options.type);
  const maxDelayMs = options.reconnect?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const maxAttempts = options.reconnect?.maxAttempts ?? Infinity;
  if (!(maxDelayMs >= 0)) throw new RangeError(`reconnect.maxDelayMs is a number of milliseconds, not ${maxDelayMs}`);
  if (!(maxAttempts >= 1)) throw new RangeError(`reconnect.maxAttempts is at least 1, not ${maxAttempts}`);
  return follow<TEvent>(url, options, maxDelayMs, maxAttempts);
}

/** The stream URL with `after` and `type` in its query (DESIGN §9: `?after=<event id>`, `type=order.*` as a comma list). */
function streamUrl(base: string, after: string | undefined, type: string | string[] | undefined): string {
  const url = new URL(base);
  if (after !== undefined) url.searchParams.set('after', after);
  if (type !== undefined) url.searchParams.set('type', Array.isArray(type) ? type.join(',') : type);
  return url.href;
}

async function* follow<TEvent extends CanonEvent>(url: string, options: EventStreamOptions, maxDelayMs: number, maxAttempts: number): AsyncGenerator<TEvent, void, undefined> {
  // One controller for the whole iteration: the caller's signal, a `break` (return()) and a fatal error all end it.
  const stop = new AbortController();
  const forward = (): void => stop.abort();
  options.signal?.addEventListener('abort', forward, { once: true });
  if (options.signal?.aborted) stop.abort();
  let retryMs = DEFAULT_RETRY_MS;
  let lastEventId: string | undefined;
  let lastSequence = -Infinity;
  /** Connection attempts in a row that got no stream. */
  let failures = 0;
  /** Counts a failed attempt; past the bound the iteration ends with its error. */
  const failed = (error: unknown): void => {
    failures++;
    if (failures >= maxAttempts) throw error;
  };
  try {
    while (!stop.signal.aborted) {
      // The credentials' provider retries what it can itself (a token request): what it throws ends the iteration.
      const headers = new Headers(await options.headers());
      headers.set('accept', 'text/event-stream');
      if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
      let response: Response;
      try {
        response = await options.fetch(url, { headers, signal: stop.signal });
      } catch (err) {
        if (stop.signal.aborted) return;
        failed(err);
        await sleep(backoff(retryMs, failures, maxDelayMs), stop.signal);
        continue;
      }
      if (response.status !== 200) {
        const error = await errorOf(response);
        if (!TRANSIENT.has(response.status)) throw error;
        failed(error);
        const after = retryAfterMs(response.headers.get('retry-after'), Date.now());
        await sleep(Math.max(after ?? 0, backoff(retryMs, failures, maxDelayMs)), stop.signal);
        continue;
      }
      const contentType = response.headers.get('content-type') ?? '';
      if (!/^text\/event-stream\s*(?:;|$)/i.test(contentType)) {
        await response.body?.cancel().catch(() => undefined);
        throw new CanonError(
          200,
          { code: 'NOT_AN_EVENT_STREAM', message: `The stream URL answered ${contentType || 'without a content type'}, not text/event-stream.` },
          requestIdOf(response),
        );
      }
      failures = 0;
      if (!response.body) {
        await sleep(retryMs, stop.signal);
        continue;
      }
      const pending: EventSourceMessage[] = [];
      let tooLarge = false;
      const parser = createParser({
        onEvent: (message) => pending.push(message),
        onRetry: (ms) => (retryMs = ms),
        // Unknown fields and malformed retry: lines are ignored (WHATWG HTML §9.2.6); an endless frame is not.
        onError: (error) => (tooLarge ||= error.type === 'max-buffer-size-exceeded'),
        maxBufferSize: MAX_FRAME_CHARS,
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
          if (tooLarge) throw new CanonError(200, { code: 'EVENT_TOO_LARGE', message: `An event frame exceeded ${MAX_FRAME_CHARS} characters.` }, requestIdOf(response));
          for (let i = 0; i < pending.length; i++) {
            const message = pending[i]!;
            const event = parseEvent<TEvent>(message, response);
            if (message.id !== undefined) lastEventId = message.id;
            if (typeof event.sequence === 'number') {
              if (event.sequence <= lastSequence) continue;
              lastSequence = event.sequence;
            }
            yield event;
            // Aborted while the consumer handled that event: nothing more is handed out.
            if (stop.signal.aborted) return;
          }
          pending.length = 0;
        }
      } catch (err) {
        if (stop.signal.aborted) return;
        if (err instanceof CanonError) throw err;
        // The connection broke mid-stream (a reset, a server that stopped): resumed below, like an end.
      } finally {
        // Closes the response body, and with it the connection: on a break, an abort, an error or an end alike.
        reader.cancel().catch(() => undefined);
      }
      // The frame cut off by the disconnect, if any, is dropped with this parser; Last-Event-ID resumes after the last whole one.
      await sleep(retryMs, stop.signal);
    }
  } finally {
    options.signal?.removeEventListener('abort', forward);
    stop.abort();
  }
}

/** One `data:` payload as an event: a JSON object with a string `id` (DESIGN §9), else the stream is not Canon's. */
function parseEvent<TEvent extends CanonEvent>(message: EventSourceMessage, response: Response): TEvent {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || typeof (value as { id?: unknown }).id !== 'string') {
    throw new CanonError(200, { code: 'INVALID_EVENT', message: `An event on the stream is not a JSON event object: ${message.data.slice(0, 200)}` }, requestIdOf(response));
  }
  return value as TEvent;
}

/**
 * The wait before attempt number `failures + 1`: the server's `retry:` after a clean disconnect, then
 * exponential growth with "equal jitter" (half fixed, half random, so clients that failed together spread out)
 * capped at `maxDelayMs`, and never shorter than the server's `retry:`.
 */
export function backoff(retryMs: number, failures: number, maxDelayMs: number, random: () => number = Math.random): number {
  if (failures <= 0) return retryMs;
  const ceiling = Math.max(retryMs, Math.min(maxDelayMs, retryMs * 2 ** Math.min(failures, 30)));
  return Math.max(retryMs, ceiling / 2 + random() * (ceiling / 2));
}

/** `Retry-After` (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an HTTP-date; undefined when absent or malformed. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS));
    signal.addEventListener('abort', done, { once: true });
  });
}

function requestIdOf(response: Response): string | undefined {
  return response.headers.get('x-request-id') ?? undefined;
}

/** An error answer as a CanonError: the uniform error body (spec §7) when there is one, else the status alone. */
async function errorOf(response: Response): Promise<CanonError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The body broke off: the status still says what happened.
  }
  let error: ErrorObject | undefined;
  try {
    const body = JSON.parse(text) as { error?: Partial<ErrorObject> } | null;
    const e = body?.error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') error = e as ErrorObject;
  } catch {
    // Not JSON (a proxy's page): described by the status below.
  }
  return new CanonError(
    response.status,
    error ?? { code: `HTTP_${response.status}`, message: `The stream URL answered ${response.status} ${response.statusText}`.trim() },
    requestIdOf(response),
  );
}
