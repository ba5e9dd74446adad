// One request to the API: credentials, Idempotency-Key, conditional headers, the ETag cache, retries with backoff, and the answer parsed or turned into a CanonError.
import type { EtagCache } from './etag-cache.js';
import { CanonError, CanonNetworkError, type ErrorObject } from './errors.js';
import { backoffDelay, retryableAnswer, retryableUnanswered, retryAfterMs, sleep, type RetryPolicy } from './retry.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a caller asks the transport to send. */
export interface Send {
  method: Method;
  /** A path from the server's root, as links and `Location` give it (`/v2/products?limit=3`), or an absolute URL. */
  url: string;
  /** A body to send as JSON (`contentType` says which JSON type; default `application/json`). */
  json?: unknown;
  contentType?: string;
  /** A body to send form-encoded (the token endpoint, RFC 6749 §4.4.2). */
  form?: Record<string, string>;
  /** POST only: the key to send; a fresh UUID when absent; `false` for endpoints that keep no keys (login, token). */
  idempotencyKey?: string | false;
  ifMatch?: string;
  ifNoneMatch?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** `false` for the credential's own requests (the token endpoint, the login): no credential headers, no recovery. */
  authenticate?: boolean;
}

/** A successful answer (2xx, or 304), its body parsed. */
export interface Reply {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined for an empty one (204, a 304 the cache could not answer). */
  body: unknown;
  url: string;
  /** True when a 304 was answered with the cached body. */
  fromCache: boolean;
}

/** How a credential takes part in requests (src/credentials/). */
export interface Credential {
  /** The headers of one try: may first fetch a token or log in (one such request for all concurrent calls). */
  headers(method: Method, url: string): Record<string, string> | Promise<Record<string, string>>;
  /** Sees every answer (a cookie jar keeps its `Set-Cookie`s). */
  received?(response: Response, url: string): void;
  /** Whether a refused answer can be mended with fresh credentials (`sent`: what `headers` gave that try): the request is then sent once more. */
  recover?(error: CanonError, sent: Record<string, string>, url: string): Promise<boolean>;
  /** The fetch `credentials` mode: browser sessions let the browser carry the cookie (`include`). */
  readonly fetchCredentials?: RequestInit['credentials'];
}

export interface TransportOptions {
  baseUrl: string;
  fetch: typeof fetch;
  retries: RetryPolicy;
  cache: EtagCache | undefined;
  /** Sent on every request (a `User-Agent`, tracing headers). */
  headers: Record<string, string>;
  /** How long one try may take, answer body included, before it counts as a network failure (0: no limit). */
  timeoutMs: number;
  random?: () => number;
}

const JSON_ACCEPT = 'application/json';

export class Transport {
  credential: Credential | undefined;
  private readonly base: string;

  constructor(private readonly options: TransportOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  /** An absolute URL for a path from the server's root; the base URL's own path (a proxy's prefix) is kept. */
  resolve(path: string): string {
    if (/^https?:\/\//i.test(path)) return path;
    return this.base + (path.startsWith('/') ? path : `/${path}`);
  }

  async send(req: Send): Promise<Reply> {
    const url = this.resolve(req.url);
    const { method } = req;
    const headers: Record<string, string> = { accept: JSON_ACCEPT, ...this.options.headers, ...req.headers };
    let payload: string | undefined;
    if (req.json !== undefined) {
      payload = JSON.stringify(req.json);
      headers['content-type'] = req.contentType ?? 'application/json';
    } else if (req.form !== undefined) {
      payload = new URLSearchParams(req.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    // Every POST carries a key, the same on every try of this call (DESIGN §7, §11): a repeat cannot act twice.
    if (method === 'POST' && req.idempotencyKey !== false) headers['idempotency-key'] = req.idempotencyKey ?? crypto.randomUUID();
    if (req.ifMatch !== undefined) headers['if-match'] = req.ifMatch;
    const cache = method === 'GET' ? this.options.cache : undefined;
    let cached = cache?.get(url);
    if (req.ifNoneMatch !== undefined) {
      headers['if-none-match'] = req.ifNoneMatch;
      if (cached !== undefined && cached.etag !== req.ifNoneMatch) cached = undefined;
    } else if (cached !== undefined) headers['if-none-match'] = cached.etag;

    const policy = this.options.retries;
    const started = Date.now();
    const credential = req.authenticate === false ? undefined : this.credential;
    // Whether an earlier try may have reached the server and acted (its connection failed after sending).
    let uncertain = false;
    let recovered = false;
    for (let attempt = 1; ; attempt++) {
      const auth = credential === undefined ? undefined : await credential.headers(method, url);
      const sent = auth === undefined ? headers : { ...headers, ...auth };
      let response: Response;
      let text: string;
      try {
        ({ response, text } = await this.attempt(url, method, sent, payload, req.signal));
      } catch (err) {
        if (req.signal?.aborted) throw req.signal.reason;
        uncertain = true;
        const wait = backoffDelay(attempt, policy, this.options.random);
        if (attempt >= policy.attempts || !retryableUnanswered(method, req.ifMatch !== undefined) || !fits(started, wait, policy)) {
          throw new CanonNetworkError(`${method} ${url} got no answer after ${attempt} ${attempt === 1 ? 'try' : 'tries'}: ${describe(err)}`, attempt, err);
        }
        await sleep(wait, req.signal);
        continue;
      }
      const { status } = response;
      // Redirects are not followed (`redirect: 'manual'`): the API key or token would go wherever the Location
      // points. Canon answers API requests without redirects; one means a misconfigured proxy or base URL.
      if (response.type === 'opaqueredirect' || (status >= 300 && status < 400 && status !== 304)) {
        const to = response.headers.get('location');
        throw new CanonError(
          status,
          {
            code: 'REDIRECT',
            message: `${method} ${url} was redirected${to ? ` to ${to}` : ''}; the client follows no redirect, so its credentials never leave the base URL's server.`,
          },
          undefined,
          { attempts: attempt },
        );
      }
      if (status < 400) {
        let body: unknown;
        let fromCache = false;
        if (status === 304) {
          if (cached !== undefined) {
            body = JSON.parse(cached.text);
            fromCache = true;
          }
        } else {
          body = parse(text, status, response.headers);
          const etag = cache !== undefined && status === 200 ? response.headers.get('etag') : null;
          if (etag !== null) cache!.set(url, { etag, text });
        }
        return { status, headers: response.headers, body, url, fromCache };
      }
      // A DELETE whose earlier try may have deleted it: gone is what was asked (spec §4: a repeated DELETE may answer 404).
      if (method === 'DELETE' && status === 404 && uncertain) return { status: 204, headers: response.headers, body: undefined, url, fromCache: false };
      const after = retryAfterMs(response.headers.get('retry-after'), response.headers.get('date'), Date.now());
      const error = errorOf(status, response, text, attempt, after);
      // Refused credentials (an expired token or session, a stale CSRF token) are mended once, then tried again.
      if (!recovered && credential?.recover !== undefined && (status === 401 || status === 403) && (await credential.recover(error, auth!, url))) {
        recovered = true;
        attempt--;
        continue;
      }
      if (attempt >= policy.attempts || !retryableAnswer(status, error.code)) throw error;
      const wait = after ?? backoffDelay(attempt, policy, this.options.random);
      // Waiting less than Retry-After asks would only be refused again: past the bounds, the answer stands.
      if (wait > policy.maxDelayMs || !fits(started, wait, policy)) throw error;
      await sleep(wait, req.signal);
    }
  }

  /** The headers of a request made outside `send` (the event stream): the client's own, then the credential's. */
  async headersFor(method: Method, url: string): Promise<Record<string, string>> {
    const auth = this.credential === undefined ? undefined : await this.credential.headers(method, url);
    return { ...this.options.headers, ...auth };
  }

  /** The fetch for requests made outside `send`: no redirect followed, as in `send`, and the credential's fetch mode (a browser session's cookie). */
  get fetch(): typeof fetch {
    const mode = this.credential?.fetchCredentials;
    const inner = this.options.fetch;
    return (input, init) => inner(input, { ...init, redirect: 'manual', ...(mode !== undefined ? { credentials: mode } : {}) });
  }

  /**
   * One try: the answer and its whole body, or a throw when either does not arrive (in time). The caller's signal
   * goes to fetch and cancels the request. `timeoutMs` is a race, not an abort: a per-request AbortSignal cost about
   * 30-45 µs of CPU per call in Node's fetch (undici tracks each signal with a WeakRef and a FinalizationRegistry;
   * bench/client.mjs), several times all the rest of the client. A try that loses the race is abandoned: its
   * connection is freed when its answer ends or the runtime gives up on it (Node: undici's 300 s header and body
   * timeouts), and a late answer is dropped.
   */
  private attempt(
    url: string,
    method: Method,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; text: string }> {
    const init: RequestInit = { method, headers, redirect: 'manual' };
    if (body !== undefined) init.body = body;
    if (signal !== undefined) init.signal = signal;
    const mode = this.credential?.fetchCredentials;
    if (mode !== undefined) init.credentials = mode;
    const exchange = this.exchange(url, init);
    const { timeoutMs } = this.options;
    if (timeoutMs <= 0) return exchange;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Abandoned: whatever it settles with later is nobody's (no unhandled rejection).
        exchange.catch(() => undefined);
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    return Promise.race([exchange, late]).finally(() => clearTimeout(timer));
  }

  private async exchange(url: string, init: RequestInit): Promise<{ response: Response; text: string }> {
    const response = await this.options.fetch(url, init);
    this.credential?.received?.(response, url);
    return { response, text: await response.text() };
  }
}

/** Whether a wait of `ms` still ends within the call's total time. */
function fits(started: number, ms: number, policy: RetryPolicy): boolean {
  return Date.now() + ms - started <= policy.maxElapsedMs;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
}

/** A 2xx body: JSON, or nothing. Anything else means the URL is not a Canon API. */
function parse(text: string, status: number, headers: Headers): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new CanonError(
      status,
      { code: 'INVALID_RESPONSE', message: `The ${status} answer is not JSON (${headers.get('content-type') ?? 'no Content-Type'}).` },
      headers.get('x-request-id') ?? undefined,
    );
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The error of a 4xx/5xx answer: Canon's uniform body (spec §7), the token endpoint's RFC 6749 §5.2 body
 * (`{error, error_description}`), or, from something in front of the server (a proxy's 502 page), a code made of the status.
 */
function errorOf(status: number, response: Response, text: string, attempts: number, retryAfter: number | undefined): CanonError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const context = { attempts, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}) };
  let error: ErrorObject;
  if (isRecord(body) && isRecord(body.error) && typeof body.error.code === 'string') {
    const e = body.error;
    error = { code: e.code as string, message: typeof e.message === 'string' ? e.message : String(e.code), details: e.details };
    if (typeof e.request_id === 'string') error.request_id = e.request_id;
  } else if (isRecord(body) && typeof body.error === 'string') {
    error = { code: body.error, message: typeof body.error_description === 'string' ? body.error_description : body.error };
  } else {
    error = { code: `HTTP_${status}`, message: `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}` };
  }
  return new CanonError(status, error, requestId, context);
}
