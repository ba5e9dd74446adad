// The checker's HTTP client (undici): a bounded number of requests at a bounded rate, a time limit on each, bodies
// read up to a cap, redirects followed only within the base URL's origin, and network trouble as ProbeError.
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import type { Exchange } from './types.js';

/** Bodies past this are cut (an unbounded list can be huge); the exchange says so. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_REDIRECTS = 5;

/** The checker could not get an answer (timeout, reset, refused, its request budget): reported as `error`, not `fail`. */
export class ProbeError extends Error {
  constructor(
    readonly request: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SendOptions {
  headers?: Record<string, string>;
  body?: string;
  /** Send the --header values (credentials); false probes what an anonymous client sees. */
  auth?: boolean;
  /** A 429 is what this request looks for; elsewhere a 429 is the checker's own volume, reported as ProbeError. */
  expect429?: boolean;
  /** false: start at once, outside the rate (the second of a concurrent pair). */
  paced?: boolean;
  /** Deleting what the checker created: allowed past --max-requests, so that no write is left behind. */
  cleanup?: boolean;
}

export interface ProbeConfig {
  baseUrl: URL;
  headers: Array<[string, string]>;
  maxRequests: number;
  timeoutMs: number;
  rate: number;
  ca: string | undefined;
}

/** `GET /v2/products?limit=2`: how evidence names a request (the origin is the report's base URL). */
export function describe(method: string, url: URL): string {
  return `${method} ${url.pathname}${url.search}`;
}

export class Probe {
  private readonly agent: Agent;
  private nextStart = 0;
  /** Requests sent so far (redirect hops count). */
  count = 0;
  /** Every exchange without its body, in order: rules that judge the whole run (deprecation, cookies) read it. */
  readonly log: Exchange[] = [];

  constructor(private readonly config: ProbeConfig) {
    const ca = config.ca === undefined ? undefined : [...rootCertificates, config.ca];
    this.agent = new Agent({
      connect: { timeout: config.timeoutMs, ...(ca ? { ca } : {}) },
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
      keepAliveTimeout: 2000,
    });
  }

  /** A path relative to the base URL (`products`, `/products`, `?x=1` kept on it) or an absolute URL of its origin. */
  resolve(target: string | URL): URL {
    if (target instanceof URL) return target;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return new URL(target);
    const base = this.config.baseUrl;
    const basePath = base.pathname.replace(/\/+$/, '');
    const [path = '', query] = target.split('?', 2) as [string, string?];
    const url = new URL(base.origin);
    url.pathname = path.startsWith(basePath + '/') || path === basePath ? path : `${basePath}/${path.replace(/^\/+/, '')}`;
    if (query !== undefined) url.search = `?${query}`;
    return url;
  }

  /** A link from a response (`href` relative to the URL it came from), or undefined when it leaves the base origin. */
  follow(href: string, from: URL): URL | undefined {
    let url: URL;
    try {
      url = new URL(href, from);
    } catch {
      return undefined;
    }
    return url.origin === this.config.baseUrl.origin ? url : undefined;
  }

  async send(method: string, target: string | URL, options: SendOptions = {}): Promise<Exchange> {
    let url = this.resolve(target);
    if (url.origin !== this.config.baseUrl.origin) throw new ProbeError(describe(method, url), `refusing to leave the base URL's origin (${this.config.baseUrl.origin})`);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'canon-check' };
    if (options.auth !== false) for (const [name, value] of this.config.headers) headers[name.toLowerCase()] = value;
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    for (let hop = 0; ; hop++) {
      const exchange = await this.once(method, url, headers, options.body, options.paced !== false, options.cleanup === true);
      const location = exchange.headers.location;
      // Redirects only within the origin (issue 30, safety); GET and HEAD only, so a write is never re-sent elsewhere.
      if (exchange.status >= 300 && exchange.status < 400 && exchange.status !== 304 && location && (method === 'GET' || method === 'HEAD') && hop < MAX_REDIRECTS) {
        const next = this.follow(location, url);
        if (next) {
          url = next;
          continue;
        }
      }
      if (exchange.status === 429 && !options.expect429) {
        throw new ProbeError(
          describe(method, url),
          `rate limited (429, Retry-After ${exchange.headers['retry-after'] ?? 'absent'}): the checker's own volume; lower --max-requests or raise the limit`,
        );
      }
      return exchange;
    }
  }

  private async once(method: string, url: URL, headers: Record<string, string>, body: string | undefined, paced: boolean, cleanup: boolean): Promise<Exchange> {
    const what = describe(method, url);
    if (this.count >= this.config.maxRequests && !cleanup) throw new ProbeError(what, `request budget exhausted (--max-requests ${this.config.maxRequests})`);
    this.count++;
    if (paced) await this.pace();
    try {
      const res = await request(url, { method, headers, body, dispatcher: this.agent, signal: AbortSignal.timeout(this.config.timeoutMs) });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(chunk);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      const flat: Record<string, string> = {};
      let setCookies: string[] = [];
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        if (name === 'set-cookie') setCookies = Array.isArray(value) ? value : [value];
        else flat[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const exchange: Exchange = { method, url, requestHeaders: headers, status: res.statusCode, headers: flat, setCookies, text, json: parseJson(text, flat), truncated };
      // The log keeps status, headers and cookies only: bodies (up to 8 MiB each) would make it grow with the budget.
      this.log.push({ ...exchange, text: '', json: undefined });
      return exchange;
    } catch (err) {
      throw new ProbeError(what, networkMessage(err, this.config.timeoutMs));
    }
  }

  /** Spaces request starts at least 1/rate seconds apart. */
  private async pace(): Promise<void> {
    const now = Date.now();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + 1000 / this.config.rate;
    if (start > now) await new Promise((resolve) => setTimeout(resolve, start - now));
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function parseJson(text: string, headers: Record<string, string>): unknown {
  // JSON by its media type, or by its look when the server labels it wrongly (the error-body rule judges the label).
  if (!text || !(/json/i.test(headers['content-type'] ?? '') || /^\s*[[{]/.test(text))) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Names the trouble plainly: timeouts, resets and refusals are the usual ones. */
function networkMessage(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no answer within ${timeoutMs / 1000} s (timeout)`;
  }
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset by the server';
  if (code === 'ECONNREFUSED') return 'connection refused';
  return `network error: ${code ?? ''} ${e.message ?? String(err)}`.trim();
}
