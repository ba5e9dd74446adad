// One signed webhook POST over HTTPS with undici (DESIGN §9): never throws, never follows redirects, bounded in time and memory, connects only to allowed addresses.
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Agent, request as undiciRequest } from 'undici';
import { addressVerdict, guardedLookup, type UrlPolicy } from './address-policy.js';
import { parseRetryAfter } from './retry-schedule.js';
import { signatureHeaders } from './signature.js';

export interface SendInput {
  url: string;
  /** The webhook-id (the event id). */
  id: string;
  /** Unix seconds, signed into webhook-timestamp. */
  timestamp: number;
  /** The JSON payload, sent and signed as is. */
  body: string;
  /** Every current secret of the endpoint (two during a rotation); each signs. */
  secrets: readonly string[];
}

export interface SendOutcome {
  /** A 2xx answer. */
  ok: boolean;
  /** The receiver's status code, null when no response came. */
  statusCode: number | null;
  durationMs: number;
  /** Why it failed (timeout, TLS, refused address, DNS, reset, or the non-2xx status); null on success. */
  error: string | null;
  /** The receiver's Retry-After (RFC 9110 §10.2.3) in seconds, on a failed answer that carried one. */
  retryAfterSeconds?: number;
  /** 410 Gone: the receiver says the endpoint no longer exists (DESIGN §9: the endpoint is disabled). */
  gone: boolean;
}

export interface WebhookSenderOptions {
  policy: UrlPolicy;
  /** The whole attempt, connection, headers and body included (DESIGN §9: 2xx within 15 s). */
  timeoutMs?: number;
  /** The most of a response body read before the connection is dropped. */
  maxResponseBytes?: number;
  /** Concurrent connections kept per origin (scheme, host, port). */
  connectionsPerOrigin?: number;
}

const USER_AGENT = 'Canon-Webhooks/1';

/** The pool every send goes through, and undici's request(): imported at the first send (WebhookSender.undici). */
interface UndiciClient {
  agent: Agent;
  request: typeof undiciRequest;
}

/** OpenSSL certificate verification codes as Node reports them (err.code), besides the ERR_TLS_ / ERR_SSL_ families. */
const TLS_CODE = /^(?:ERR_TLS_|ERR_SSL_)|CERT|SIGNATURE|ISSUER|CHAIN/;

type CodedError = Error & { code?: string; cause?: unknown };

/** The most specific error along the `cause` chain (undici wraps socket errors). */
function innermost(err: unknown): CodedError {
  let current = err as CodedError;
  for (let i = 0; i < 5 && current?.cause instanceof Error; i++) current = current.cause as CodedError;
  return current instanceof Error ? current : Object.assign(new Error(String(err)), { code: undefined });
}

function explain(err: unknown, timeoutMs: number): string {
  const inner = innermost(err);
  const code = inner.code ?? (err as CodedError)?.code ?? '';
  const detail = code ? `${inner.message} (${code})` : inner.message;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT') {
    return `timeout: no complete response within ${timeoutMs} ms (${code})`;
  }
  if (code === 'EADDRNOTALLOWED') return `refused address: ${inner.message}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'ENODATA') return `DNS failure: ${detail}`;
  if (TLS_CODE.test(code)) return `TLS error: ${detail}`;
  if (code === 'ECONNREFUSED') return `connection refused: ${detail}`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return `connection reset: ${detail}`;
  return `request failed: ${detail}`;
}

/** Why `url` may not be sent to before any connection is made, or null. The address of a host name is checked later, on connect. */
function preflight(url: string, policy: UrlPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'refused: not a URL';
  }
  // DESIGN §9: https only, even with CANON_WEBHOOK_ALLOW_PRIVATE.
  if (parsed.protocol !== 'https:') return 'refused: not an https:// URL';
  if (parsed.username || parsed.password) return 'refused: the URL carries credentials';
  // Node's net.connect calls `lookup` only for names, never for an IP literal: a literal is checked here instead.
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (!policy.allowPrivate && isIP(host) !== 0) {
    const verdict = addressVerdict(host);
    if (!verdict.allowed) return `refused address: ${verdict.reason}`;
  }
  return null;
}

/**
 * Sends signed webhooks. One undici Agent keeps a pool of kept-alive connections per origin; its connector
 * resolves names through `guardedLookup`, so the address each socket connects to is the address checked (a
 * name that resolves to a private address by the time of delivery, DNS rebinding, is refused then). TLS trusts
 * Node's defaults: the system store plus NODE_EXTRA_CA_CERTS.
 */
export class WebhookSender {
  /** undici and the Agent, made at the first send (see undici()). */
  private client: Promise<UndiciClient> | undefined;
  private readonly policy: UrlPolicy;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly connections: number;

  constructor(options: WebhookSenderOptions) {
    this.policy = options.policy;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 4096;
    this.connections = options.connectionsPerOrigin ?? 8;
  }

  /**
   * undici is imported here rather than at the top: a process with no webhook endpoint to deliver to would
   * otherwise load it at every start for nothing (docs/architecture.md, "What a process loads").
   */
  private undici(): Promise<UndiciClient> {
    this.client ??= import('undici').then(({ Agent, request }) => ({
      agent: new Agent({
        connections: this.connections,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        connect: { lookup: guardedLookup(this.policy) as never, timeout: this.timeoutMs },
      }),
      request,
    }));
    return this.client;
  }

  async send(input: SendInput): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const refused = preflight(input.url, this.policy);
    if (refused) return { ok: false, statusCode: null, durationMs: elapsed(), error: refused, gone: false };
    let client: UndiciClient;
    try {
      // Loaded before the attempt's clock starts: loading the client is no part of the receiver's time.
      client = await this.undici();
    } catch (err) {
      return { ok: false, statusCode: null, durationMs: elapsed(), error: `not sent: ${(err as Error).message}`, gone: false };
    }
    const { agent, request } = client;

    const controller = new AbortController();
    // Only this timer aborts: an aborted signal means the attempt ran out of time, whichever layer noticed first.
    const timer = setTimeout(() => controller.abort(new Error(`timeout after ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      let headers: Record<string, string>;
      try {
        headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...signatureHeaders(input) };
      } catch (err) {
        return { ok: false, statusCode: null, durationMs: elapsed(), error: `not sent: ${(err as Error).message}`, gone: false };
      }
      // undici's request() never follows redirects (that takes its redirect interceptor, not used here).
      const response = await request(input.url, {
        dispatcher: agent,
        method: 'POST',
        headers,
        body: input.body,
        signal: controller.signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await this.drain(response.body);
      const statusCode = response.statusCode;
      const ok = statusCode >= 200 && statusCode < 300;
      const outcome: SendOutcome = { ok, statusCode, durationMs: elapsed(), error: ok ? null : failure(statusCode), gone: statusCode === 410 };
      if (!ok) {
        const header = response.headers['retry-after'];
        const retryAfter = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now());
        if (retryAfter !== undefined) outcome.retryAfterSeconds = retryAfter;
      }
      return outcome;
    } catch (err) {
      const error = controller.signal.aborted ? `timeout: no complete response within ${this.timeoutMs} ms` : explain(err, this.timeoutMs);
      return { ok: false, statusCode: null, durationMs: elapsed(), error, gone: false };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads and drops at most `maxResponseBytes` of the body: a body that ends within that leaves the connection
   * reusable; a longer one (or one that stalls until the timeout) is destroyed, and undici drops its socket.
   * The status already decided the outcome, so a body error is not one.
   */
  private async drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
    let read = 0;
    let complete = false;
    try {
      for await (const chunk of body) {
        read += chunk.length;
        if (read > this.maxResponseBytes) break;
      }
      complete = read <= this.maxResponseBytes;
    } catch {
      // The answer's status is known; a body cut short only costs the connection.
    } finally {
      body.destroy();
    }
    // undici hands a kept-alive HTTP/1.1 connection back to its pool one event-loop turn after the response ends
    // (setImmediate in client-h1.js); waiting that turn lets the caller's next send reuse it instead of opening another.
    if (complete) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Closes every pooled connection once its requests are done. */
  async close(): Promise<void> {
    if (this.client) await (await this.client).agent.close();
  }
}

function failure(statusCode: number): string {
  if (statusCode >= 300 && statusCode < 400) return `HTTP ${statusCode}: redirects are not followed`;
  return `HTTP ${statusCode}`;
}
