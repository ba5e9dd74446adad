// Test harness: starts Canon in-process on an in-memory SQLite store and talks to it through inject or a real socket.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { violations } from './conformance.js';
import { resolveConfig, type Config } from '../../src/config/config.js';
import type { RateLimits } from '../../src/limits/rate-limiter.js';
import type { AppDef } from '../../src/model/types.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/compose.js';
import { createTestDatabase, PG_URL } from './pg.js';
import { commerce } from '../../examples/commerce/index.js';

export const ADMIN_KEY = 'ck_test_admin_key_0123456789abcdefghij';

/** Limits on, so every request goes through the limiter, but high enough that suites never meet them. */
export const GENEROUS_LIMITS: RateLimits = {
  enabled: true,
  algorithm: 'token-bucket',
  perPrincipal: { limit: 1_000_000, periodSeconds: 1 },
  perIp: { limit: 1_000_000, periodSeconds: 1 },
  global: { limit: 1_000_000, periodSeconds: 1 },
  loginPerAccount: { limit: 1_000_000, periodSeconds: 1 },
  loginPerDevice: { limit: 1_000_000, periodSeconds: 1 },
  loginPerIp: { limit: 1_000_000, periodSeconds: 1 },
  ipv6Prefix: 64,
};
/** Only `limit` requests a minute per principal, every other limit far above what a suite sends: the 429 tests' limits. */
export function principalLimits(limit: number): RateLimits {
  const roomy = { limit: 1000, periodSeconds: 60 };
  return {
    ...GENEROUS_LIMITS,
    perPrincipal: { limit, periodSeconds: 60 },
    perIp: roomy,
    global: { limit: 100_000, periodSeconds: 60 },
    loginPerAccount: roomy,
    loginPerDevice: roomy,
    loginPerIp: roomy,
  };
}

/**
 * Overload protection with the event-loop check off (0), for every test not about overload (issue 26.14). A
 * high threshold is not enough: @fastify/under-pressure reads a sample in which the loop never ticked (a stall
 * or a starved process spanning the whole sample, as on a loaded CI machine) as an infinite delay, over any
 * threshold, and answered 503. The heap check stays (90% of V8's limit); the overload tests set their own.
 */
export const TEST_OVERLOAD: Config['overload'] = { maxEventLoopDelayMs: 0, maxHeapUsedBytes: undefined, sampleIntervalMs: 1000, retryAfterSeconds: 10 };
/**
 * Cheap scrypt parameters for tests (16 KiB, well under a millisecond a hash; at N=1024 a user cost ten products):
 * no suite but password-guessing.test.ts is about the hash, and it sets costs of its own. Production uses the OWASP minimum.
 */
export const TEST_PASSWORD_COST = { N: 16, r: 8, p: 1 };
/**
 * The same for Canon processes tests start (test/support/processes.ts): CANON_MAX_EVENT_LOOP_DELAY_MS=0, and the
 * tests' scrypt cost (CANON_PASSWORD_COST): at the default, each user created or login checked in a process cost
 * 128 MiB and about 300 ms of a core, and none of those suites is about the hash (password-guessing.test.ts is,
 * in process, with costs of its own).
 */
export const TEST_PROCESS_ENV: Readonly<Record<string, string>> = {
  CANON_MAX_EVENT_LOOP_DELAY_MS: '0',
  CANON_PASSWORD_COST: `${TEST_PASSWORD_COST.N},${TEST_PASSWORD_COST.r},${TEST_PASSWORD_COST.p}`,
};

export interface Response {
  status: number;
  headers: Record<string, string>;
  /** Every Set-Cookie header, one entry each. */
  setCookies: string[];
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as is (set content-type yourself). */
  body?: unknown;
  key?: string | null;
}

/** How a test reaches Canon (in-process inject or a real socket) and which store runs underneath. */
export type Transport = 'inject' | 'listen';
export type Mode = Transport | `${Transport}/postgres`;
/** Every suite runs on SQLite, and on PostgreSQL too when CANON_TEST_DATABASE_URL is set. */
export const MODES: Mode[] = ['inject', 'listen', ...(PG_URL ? (['inject/postgres', 'listen/postgres'] as const) : [])];

export interface TestServer {
  runtime: Runtime;
  app: FastifyInstance;
  mode: Mode;
  baseUrl: string | undefined;
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  close(): Promise<void>;
}

/** A clock tests can move: `now()` for the runtime, `advance(seconds)` to jump forward. */
export class FakeClock {
  private ms: number;
  constructor(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
    this.ms = start;
  }
  now = (): Date => new Date(this.ms);
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export async function startServer(mode: Mode, overrides: Partial<Config> = {}, appDef?: AppDef, clock?: FakeClock, runtimeOptions: RuntimeOptions = {}): Promise<TestServer> {
  const db = mode.endsWith('/postgres') ? await createTestDatabase() : undefined;
  const config = resolveConfig({
    rateLimits: GENEROUS_LIMITS,
    databaseUrl: db?.url ?? 'sqlite::memory:',
    adminApiKey: ADMIN_KEY,
    seed: false,
    passwordCost: TEST_PASSWORD_COST,
    secret: 'test-secret',
    logLevel: 'silent',
    // A loaded test machine stalls event loops; a 503 then would test the guard, not the feature (TEST_OVERLOAD).
    overload: TEST_OVERLOAD,
    ...overrides,
  });
  const runtime = await createRuntime(config, { logger: false, appDef: appDef ?? commerce, ...(clock ? { clock: clock.now } : {}), ...runtimeOptions });
  let baseUrl: string | undefined;
  const transport: Transport = mode.startsWith('listen') ? 'listen' : 'inject';
  if (transport === 'listen') baseUrl = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  const request = async (method: string, path: string, options: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const key = options.key === undefined ? ADMIN_KEY : options.key;
    if (key !== null) headers['x-api-key'] = key;
    let payload: string | undefined;
    if (options.body !== undefined) {
      if (typeof options.body === 'string') payload = options.body;
      else {
        payload = JSON.stringify(options.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
    }
    const res =
      transport === 'inject'
        ? fromInject(await runtime.app.inject({ method: method as 'GET', url: path, headers, ...(payload !== undefined ? { payload } : {}) }))
        : await fromFetch(await fetch(`${baseUrl}${path}`, { method, headers, ...(payload !== undefined ? { body: payload } : {}) }));
    // Every response the suite receives is checked against its operation in the catalog (issue 27.3).
    const wrong = runtime.config.versioning === 'path' ? violations(runtime.catalog, runtime.model, method, path, res) : [];
    if (wrong.length > 0) throw new Error(`${method} ${path} → ${res.status} does not conform to the catalog:\n- ${wrong.join('\n- ')}\n${res.text.slice(0, 500)}`);
    return res;
  };
  const close = async (): Promise<void> => {
    await runtime.close();
    await db?.drop();
  };
  return { runtime, app: runtime.app, mode, baseUrl, request, close };
}

/** An `app.inject` answer as a Response (headers flattened, lower-case). */
export function fromInject(res: LightMyRequestResponse): Response {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  const raw = res.headers['set-cookie'];
  const setCookies = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  return { status: res.statusCode, headers: flat, setCookies, text: res.body, body: parseBody(res.body) };
}

/** A `fetch` answer as a Response. */
export async function fromFetch(res: globalThis.Response): Promise<Response> {
  const text = await res.text();
  const flat: Record<string, string> = {};
  res.headers.forEach((v, k) => (flat[k.toLowerCase()] = v));
  return { status: res.status, headers: flat, setCookies: res.headers.getSetCookie(), text, body: parseBody(text) };
}

/** A body as JSON, or undefined when it is empty or not JSON. */
export function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Creates a customer user and an API key bound to it; returns both. */
export async function createCustomer(server: TestServer, email: string): Promise<{ userId: string; key: string }> {
  const user = await server.request('POST', '/v2/users', { body: { email, full_name: `Customer ${email}`, password: 'long enough password' } });
  if (user.status !== 201) throw new Error(`creating user failed: ${user.status} ${user.text}`);
  const key = await server.request('POST', '/v2/api-keys', { body: { name: `key for ${email}`, user_id: user.body.id } });
  if (key.status !== 201) throw new Error(`creating key failed: ${key.status} ${key.text}`);
  return { userId: user.body.id, key: key.body.key };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createProduct(server: TestServer, overrides: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await server.request('POST', '/v2/products', {
    body: { name: 'Test product', description: 'A thing to sell', price: { amount: 1000, currency: 'EUR' }, ...overrides },
  });
  if (res.status !== 201) throw new Error(`creating product failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Asserts the DESIGN §5 error body and that request_id equals the X-Request-Id header. */
export function errorShape(res: Response): {
  code: string;
  message: string;
  details?: Array<{ field: string; message: string; value?: unknown }>;
  request_id: string;
  timestamp: string;
} {
  const e = res.body?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.timestamp !== 'string' || typeof e.request_id !== 'string') {
    throw new Error(`not an error body: ${res.status} ${res.text}`);
  }
  if (e.request_id !== res.headers['x-request-id']) throw new Error(`request_id ${e.request_id} differs from X-Request-Id ${res.headers['x-request-id']}`);
  return e;
}
