// A client that sends every request through the Prism proxy of its document, asserts Prism found no violation of the document in Canon's answer, and records which operation each request exercised.
import assert from 'node:assert/strict';
import { ADMIN_KEY, parseBody, type Response } from '../../support/harness.js';

export type DocName = 'v1' | 'v2';

/** One Prism violation as the `sl-violations` header lists it. */
export interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface SendOptions {
  /** The API key (admin by default); null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
  /** Sent as JSON (content-type application/json unless `headers` name one). */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  /** Sent as is; set its content-type in `headers`. */
  raw?: string;
  /** The status Canon must answer. */
  expect: number;
  /**
   * The request breaks the document on purpose (a query, body or content type the document refuses), to provoke
   * the error Canon answers it with: it goes through the reporting proxy (Prism without --errors would otherwise
   * answer it itself, unforwarded), which must list at least one violation of the request and none of the response.
   */
  invalid?: boolean;
}

interface Route {
  method: string;
  pattern: RegExp;
  operationId: string;
  params: number;
}

/** The operations of an OpenAPI document as method + path patterns, literal paths before templated ones. */
export function routesOf(document: { paths: Record<string, Record<string, { operationId?: string }>> }): Route[] {
  const routes: Route[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const source = path
      .split('/')
      .map((seg) => (/^\{[^}]+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId) routes.push({ method: method.toUpperCase(), pattern: new RegExp(`^${source}$`), operationId: op.operationId, params: (path.match(/\{/g) ?? []).length });
    }
  }
  return routes.sort((a, b) => a.params - b.params);
}

export interface Proxies {
  /** `prism proxy --errors`: a violation becomes an error answer. */
  strict: string;
  /** `prism proxy` without --errors: forwards everything and lists the violations. */
  report: string;
}

export class ProxyClient {
  /** `doc operationId` → the statuses Canon answered it with through that document's proxy, violation-free. */
  readonly exercised = new Map<string, Set<number>>();
  /** How many requests went through, for the report. */
  sent = 0;

  constructor(
    private readonly proxies: Record<DocName, Proxies>,
    private readonly routes: Record<DocName, Route[]>,
  ) {}

  async send(doc: DocName, method: string, path: string, options: SendOptions): Promise<Response> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const key = options.key === undefined ? ADMIN_KEY : options.key;
    if (key !== null) headers['x-api-key'] = key;
    const hasType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      if (!hasType) headers['content-type'] = 'application/json';
    } else if (options.form !== undefined) {
      body = new URLSearchParams(options.form).toString();
      if (!hasType) headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (options.raw !== undefined) body = options.raw;
    const base = options.invalid ? this.proxies[doc].report : this.proxies[doc].strict;
    const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    const flat: Record<string, string> = {};
    res.headers.forEach((v, k) => (flat[k.toLowerCase()] = v));
    this.sent++;
    const what = `${method} ${path} via the ${doc} document → ${res.status}`;
    const violations = parseViolations(flat['sl-violations'], what);
    const onResponse = violations.filter((v) => v.location[0] !== 'request');
    assert.deepEqual(onResponse, [], `Prism: Canon's answer to ${what} violates the ${doc} document:\n${text.slice(0, 2000)}`);
    if (options.invalid) {
      assert.ok(violations.length > 0, `Prism found nothing wrong with ${what}, sent as breaking the document`);
    } else {
      assert.deepEqual(violations, [], `Prism: the request ${what} violates the ${doc} document`);
    }
    // Canon answered (every answer of Canon carries X-Request-Id), not Prism in its place.
    assert.ok(flat['x-request-id'], `${what} was answered by Prism, not Canon: ${text.slice(0, 1000)}`);
    assert.equal(res.status, options.expect, `${what}, expected ${options.expect}: ${text.slice(0, 1000)}`);
    const route = this.routes[doc].find((r) => r.method === method && r.pattern.test(path.split('?')[0]!));
    assert.ok(route, `${method} ${path} is no operation of the ${doc} document`);
    const seen = this.exercised.get(`${doc} ${route.operationId}`) ?? new Set<number>();
    seen.add(res.status);
    this.exercised.set(`${doc} ${route.operationId}`, seen);
    return { status: res.status, headers: flat, setCookies: splitSetCookie(flat['set-cookie']), text, body: parseBody(text) };
  }
}

function parseViolations(header: string | undefined, what: string): Violation[] {
  if (header === undefined) return [];
  assert.ok(!header.startsWith('Too many violations!'), `Prism: too many violations for ${what}: ${header.slice(0, 2000)}`);
  return JSON.parse(header) as Violation[];
}

/** Prism joins several Set-Cookie headers with commas; a new cookie starts at `, name=`. */
function splitSetCookie(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(/,(?=\s*[A-Za-z0-9_-]+=)/).map((c) => c.trim());
}
