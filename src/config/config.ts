// Every setting and its default in one place (DESIGN §2): defaults, then the config file (src/config/config-file.ts), the environment and flags, flags winning.
import type { ScryptCost } from '../auth/passwords.js';
import { DEFAULT_SCRYPT_COST } from '../auth/passwords.js';
import type { CsrfMode } from '../auth/csrf.js';
import { originOf } from '../auth/origin-check.js';
import type { PasswordWorkLimits } from '../auth/password-hasher.js';
import { availableParallelism } from 'node:os';
import { SESSION_POLICIES, type SessionPolicy } from '../auth/session-policy.js';
import { parseRate, type RateLimits } from '../limits/rate-limiter.js';

/** The ways a request may name its API version (CANON_VERSIONING, --versioning). */
export const VERSIONING_STRATEGIES = ['path', 'query', 'header', 'media-type', 'date'] as const;
export type VersioningStrategy = (typeof VERSIONING_STRATEGIES)[number];

export interface TlsConfig {
  certFile: string;
  keyFile: string;
  /** With a client CA, Canon asks for client certificates (mutual TLS). */
  clientCaFile: string | undefined;
}

/** A host and port to listen on. */
export interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  port: number;
  host: string;
  /** `sqlite:<path>`, `sqlite::memory:` (PostgreSQL arrives with the scale-out issue). */
  databaseUrl: string;
  /** Shared counters and event fan-out across processes; in-process when unset. */
  redisUrl: string | undefined;
  /** Namespaces Redis keys and channels, so deployments can share a Redis. */
  redisPrefix: string;
  /** Connections per process to PostgreSQL. */
  dbPoolSize: number;
  /**
   * SQLite's durability: `full` syncs the WAL after every commit group before its writers are answered (off the
   * event loop: src/store/sqlite/wal-sync.ts), so an acknowledged write survives an OS crash or power loss (as
   * PostgreSQL's default commit does); `normal` only survives a process crash.
   */
  sqliteSynchronous: 'full' | 'normal';
  /** PostgreSQL: name the most used statements so each connection prepares them once (off behind PgBouncer < 1.21 in transaction mode). */
  pgPreparedStatements: boolean;
  /** Small list pages and offset counts kept until the next commit (src/store/list-cache.ts); on by default. */
  listCache: boolean;
  production: boolean;
  /** An admin API key with exactly this secret exists at start. */
  adminApiKey: string | undefined;
  /** Module exporting the app definition; the reference domain when unset. */
  configModule: string | undefined;
  /** Signs cursors; generated per data directory in development, required in production. */
  secret: string | undefined;
  /** Seed demo data on first start (development only). */
  seed: boolean;
  bodyLimitBytes: number;
  maxUrlLength: number;
  maxHeaderBytes: number;
  /** Time allowed for the request headers to arrive, enforced on the socket. */
  headersTimeoutMs: number;
  /** Time allowed for the whole request (headers and body) to arrive. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  jsonMaxDepth: number;
  passwordCost: ScryptCost;
  /** Password hashes and checks at once per process, and how many may wait (src/auth/password-hasher.ts). */
  passwordWork: PasswordWorkLimits;
  logLevel: string;
  /** Responses compressed per Accept-Encoding, br or gzip (CANON_COMPRESSION; on by default; docs/configuration.md). */
  compression: boolean;
  /** Bodies smaller than this many bytes are sent uncompressed (CANON_COMPRESSION_THRESHOLD, default 1024). */
  compressionThresholdBytes: number;
  /** One JSON line per request (CANON_ACCESS_LOG=on); off by default. */
  accessLog: boolean;
  /** The base URL clients use; the OAuth issuer and token audience. Defaults to the listening address. */
  publicUrl: string | undefined;
  tokenTtlSeconds: number;
  sessionPolicy: SessionPolicy;
  sessionIdleSeconds: number;
  sessionAbsoluteSeconds: number;
  maxSessionsPerUser: number;
  csrfMode: CsrfMode;
  /** Origins besides the server's own from which browsers may create sessions (a front end on another host). */
  trustedOrigins: string[];
  tls: TlsConfig | undefined;
  /** `auto` (Strict-Transport-Security with TLS or in production), `off`, or the header value to send. */
  hsts: string;
  idempotencyTtlSeconds: number;
  /** How often each process deletes expired idempotency records; 0 turns purging off. */
  idempotencyPurgeIntervalSeconds: number;
  /** How long an API key's principal is cached; events evict it sooner. 0 disables the cache. */
  authCacheTtlMs: number;
  /** Events are kept this many days, then purged (DESIGN §9: 30). */
  eventRetentionDays: number;
  /** How often each process reads the event log with no wake-up (and, on PostgreSQL, stamps what a dead writer left). */
  eventPollMs: number;
  /** Seconds between heartbeat comments on event streams (CANON_SSE_HEARTBEAT, DESIGN §9: 15). */
  sseHeartbeatSeconds: number;
  /** The reconnection delay streams suggest (`retry:`), milliseconds. */
  sseRetryMs: number;
  /** Bytes a stream may have queued before the client is cut off (it resumes by Last-Event-ID). */
  sseBufferBytes: number;
  /** Streams one credential may hold open on one process. */
  sseMaxStreamsPerPrincipal: number;
  /** Streams one user may hold open on one process, whichever of its credentials (sessions, keys) opened them. */
  sseMaxStreamsPerUser: number;
  /** `embedded`: `canon serve` runs the delivery and payment workers; `off`: `canon worker` processes do. */
  worker: 'embedded' | 'off' | undefined;
  /** Allow webhook targets on private, loopback and link-local addresses (tests, development). Never `http://`. */
  webhookAllowPrivate: boolean;
  /** CANON_WEBHOOK_RETRY_SCHEDULE: seconds before each attempt, the first included; undefined for the default. */
  webhookRetrySchedule: string | undefined;
  /** Bound of one delivery attempt, headers and body (DESIGN §9: 15 s). */
  webhookTimeoutMs: number;
  /** Bound of one attempt of an asynchronous action's `perform` (a payment provider's call): past it the attempt has failed. */
  operationTimeoutMs: number;
  /**
   * How long a worker's claim on a delivery or an operation holds: one that died holding it leaves it to be
   * taken again after this (DESIGN §9: within 30 s). Longer than any attempt, or live claims would be retaken.
   */
  workerLeaseMs: number;
  /** How a request names its API version (DESIGN §10): `path` (`/v2/…`, default), `query` (`?version=2`), `header` (`X-API-Version`), `media-type` (`application/vnd.canon.v2+json`), `date` (`Canon-Version: 2026-03-01`, else the credential's pin). */
  versioning: VersioningStrategy;
  /** `enforce`: past its sunset date a deprecated version answers 410 VERSION_SUNSET; `off` (default): it is still served. */
  versionSunset: 'off' | 'enforce';
  rateLimits: RateLimits;
  /** GraphQL (docs/graphql.md): the deepest an operation's fields may nest (DESIGN §7: 10); deeper is refused before it runs. */
  graphqlMaxDepth: number;
  /** GraphQL: the largest cost an operation may have (each object field 1, a paged field's selection `first` times; DESIGN §7: 10,000). */
  graphqlMaxCost: number;
  /** GraphQL: the cost one request of the rate limit stands for; an operation counts ceil(cost / this) requests, at least one. */
  graphqlCostPerRequest: number;
  /** GraphQL: `__schema` and `__type` answered; unset means on in development, off in production. */
  graphqlIntrospection: boolean | undefined;
  /** GraphQL: a JSON file of persisted queries (`{"<sha256>": "<query>"}` or a list of queries) clients may name by hash. */
  graphqlPersistedQueries: string | undefined;
  /** GraphQL: answers to queries kept per caller until the data changes (src/graphql/answer-cache.ts); on by default. */
  graphqlAnswerCache: boolean;
  /**
   * Which proxies may set X-Forwarded-For (Fastify's trustProxy): `true`, or comma-separated
   * addresses and CIDRs. Only then does the header decide the client IP (for per-IP limits).
   */
  trustProxy: boolean | string;
  /** CANON_METRICS_LISTEN: a second listener serving only `GET /metrics`, without credentials (an operator's address). */
  metricsListen: ListenAddress | undefined;
  overload: {
    /** Mean event-loop delay over a sample above which requests get 503. */
    maxEventLoopDelayMs: number;
    /** Heap in use above which requests get 503; 90% of V8's heap limit when unset. */
    maxHeapUsedBytes: number | undefined;
    sampleIntervalMs: number;
    retryAfterSeconds: number;
  };
}

export const DEFAULTS: Config = {
  port: 3000,
  host: '127.0.0.1',
  databaseUrl: 'sqlite:./data/canon.db',
  redisUrl: undefined,
  redisPrefix: 'canon:',
  dbPoolSize: 10,
  sqliteSynchronous: 'full',
  pgPreparedStatements: true,
  listCache: true,
  production: false,
  adminApiKey: undefined,
  configModule: undefined,
  secret: undefined,
  seed: true,
  bodyLimitBytes: 1024 * 1024,
  maxUrlLength: 8 * 1024,
  maxHeaderBytes: 32 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  jsonMaxDepth: 32,
  passwordCost: DEFAULT_SCRYPT_COST,
  // Half the cores (at least one): the event loop keeps a core, and libuv's pool keeps threads for file and DNS work.
  passwordWork: { concurrency: Math.max(1, Math.floor(availableParallelism() / 2)), maxQueue: 16 },
  logLevel: 'info',
  accessLog: false,
  compression: true,
  compressionThresholdBytes: 1024,
  publicUrl: undefined,
  tokenTtlSeconds: 600,
  sessionPolicy: 'absolute+idle',
  sessionIdleSeconds: 1800,
  sessionAbsoluteSeconds: 43_200,
  maxSessionsPerUser: 5,
  csrfMode: 'synchronizer',
  trustedOrigins: [],
  tls: undefined,
  hsts: 'auto',
  idempotencyTtlSeconds: 86_400,
  idempotencyPurgeIntervalSeconds: 600,
  authCacheTtlMs: 10_000,
  eventRetentionDays: 30,
  eventPollMs: 1000,
  sseHeartbeatSeconds: 15,
  sseRetryMs: 3000,
  sseBufferBytes: 1_048_576,
  sseMaxStreamsPerPrincipal: 100,
  sseMaxStreamsPerUser: 25,
  worker: undefined,
  webhookAllowPrivate: false,
  webhookRetrySchedule: undefined,
  webhookTimeoutMs: 15_000,
  operationTimeoutMs: 10_000,
  workerLeaseMs: 30_000,
  versionSunset: 'off',
  versioning: 'path',
  rateLimits: {
    enabled: true,
    algorithm: 'token-bucket',
    perPrincipal: { limit: 600, periodSeconds: 60 },
    perIp: { limit: 120, periodSeconds: 60 },
    global: { limit: 20_000, periodSeconds: 1 },
    loginPerAccount: { limit: 10, periodSeconds: 300 },
    loginPerDevice: { limit: 10, periodSeconds: 300 },
    loginPerIp: { limit: 30, periodSeconds: 60 },
    ipv6Prefix: 64,
  },
  graphqlMaxDepth: 10,
  graphqlMaxCost: 10_000,
  graphqlCostPerRequest: 100,
  graphqlIntrospection: undefined,
  graphqlPersistedQueries: undefined,
  graphqlAnswerCache: true,
  trustProxy: false,
  metricsListen: undefined,
  overload: { maxEventLoopDelayMs: 1000, maxHeapUsedBytes: undefined, sampleIntervalMs: 1000, retryAfterSeconds: 10 },
};

function oneOf<T extends string>(value: string | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === '') return undefined;
  if (!allowed.includes(value as T)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

/** TLS from the three file settings; a certificate without its key (or the reverse) is a configuration error. */
export function tlsFrom(cert: string | undefined, key: string | undefined, clientCa: string | undefined): TlsConfig | undefined {
  if (!cert && !key && !clientCa) return undefined;
  if (!cert || !key) throw new Error('HTTPS needs both CANON_TLS_CERT and CANON_TLS_KEY (or --tls-cert and --tls-key)');
  return { certFile: cert, keyFile: key, clientCaFile: clientCa || undefined };
}

/** A switch: `on`, `true`, `1` or `off`, `false`, `0`; anything else is an error rather than a silently kept default. */
function onOff(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.toLowerCase();
  if (v === 'on' || v === 'true' || v === '1') return true;
  if (v === 'off' || v === 'false' || v === '0') return false;
  throw new Error(`${name} must be on or off, got "${value}"`);
}

/**
 * CANON_PASSWORD_COST, `N,r,p`: scrypt's parameters for new hashes (RFC 7914 §2; every hash keeps its own, so
 * hashes made before a change still verify). N a power of two from 2 to 2^24, r 1 to 32, p 1 to 16 (past these
 * one hash takes gigabytes or minutes). Cheaper than the default only outside production: with
 * NODE_ENV=production each parameter must be at least the default's (OWASP's minimum), so a setting meant for
 * tests and development can never weaken a deployment's hashes.
 */
function scryptCost(value: string, production: boolean): ScryptCost {
  const m = /^(\d+),(\d+),(\d+)$/.exec(value.replace(/\s+/g, ''));
  const [N, r, p] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [NaN, NaN, NaN];
  if (!m || N < 2 || N > 2 ** 24 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) {
    throw new Error(
      `CANON_PASSWORD_COST must be N,r,p with N a power of two from 2 to 16777216, r from 1 to 32 and p from 1 to 16 (default ${costText(DEFAULT_SCRYPT_COST)}), got "${value}"`,
    );
  }
  const d = DEFAULT_SCRYPT_COST;
  if (production && (N < d.N || r < d.r || p < d.p)) {
    throw new Error(
      `CANON_PASSWORD_COST ${costText({ N, r, p })} is below the default ${costText(d)}: refused in production (NODE_ENV=production), where every parameter must be at least the default's`,
    );
  }
  return { N, r, p };
}

function costText(cost: ScryptCost): string {
  return `${cost.N},${cost.r},${cost.p}`;
}

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

/** Comma-separated origins, each written as the browser sends it (`https://app.example.com`, no path). */
function trustedOrigins(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const origin = originOf(s);
      if (origin === undefined || origin !== s.replace(/\/$/, '')) throw new Error(`CANON_TRUSTED_ORIGINS: "${s}" is not an origin such as https://app.example.com`);
      return origin;
    });
}

function prefixLength(value: string | undefined): number | undefined {
  const n = int(value, 'CANON_RATE_LIMIT_IPV6_PREFIX');
  if (n !== undefined && n > 128) throw new Error(`CANON_RATE_LIMIT_IPV6_PREFIX must be 0 to 128, got "${value}"`);
  return n;
}

/** `host:port` (`127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`): the host is required, so nothing listens everywhere by accident. */
export function listenAddress(value: string, name: string): ListenAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`${name} must be host:port, such as 127.0.0.1:9464 or [::1]:9464 (port 0 to 65535), got "${value}"`);
  return { host: m[1] ?? m[2]!, port };
}

/** Reads the environment; unset variables keep the defaults. */
export function fromEnv(env: NodeJS.ProcessEnv): Partial<Config> {
  const out: Partial<Config> = {};
  const set = <K extends keyof Config>(key: K, value: Config[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('port', int(env.PORT, 'PORT'));
  set('host', env.HOST || undefined);
  set('databaseUrl', env.DATABASE_URL || undefined);
  set('redisUrl', env.REDIS_URL || undefined);
  set('redisPrefix', env.CANON_REDIS_PREFIX || undefined);
  set('dbPoolSize', int(env.CANON_DB_POOL_SIZE, 'CANON_DB_POOL_SIZE'));
  set('sqliteSynchronous', oneOf(env.CANON_SQLITE_SYNCHRONOUS?.toLowerCase(), 'CANON_SQLITE_SYNCHRONOUS', ['full', 'normal'] as const));
  const prepared = oneOf(env.CANON_PG_PREPARED_STATEMENTS?.toLowerCase(), 'CANON_PG_PREPARED_STATEMENTS', ['on', 'off'] as const);
  if (prepared !== undefined) out.pgPreparedStatements = prepared === 'on';
  set('production', env.NODE_ENV === 'production' ? true : undefined);
  set('adminApiKey', env.CANON_ADMIN_API_KEY || undefined);
  set('configModule', env.CANON_CONFIG || undefined);
  set('secret', env.CANON_SECRET || undefined);
  set('headersTimeoutMs', int(env.CANON_HEADERS_TIMEOUT_MS, 'CANON_HEADERS_TIMEOUT_MS'));
  set('requestTimeoutMs', int(env.CANON_REQUEST_TIMEOUT_MS, 'CANON_REQUEST_TIMEOUT_MS'));
  set('logLevel', env.CANON_LOG_LEVEL || undefined);
  set('accessLog', onOff(env.CANON_ACCESS_LOG, 'CANON_ACCESS_LOG'));
  set('compression', onOff(env.CANON_COMPRESSION, 'CANON_COMPRESSION'));
  set('compressionThresholdBytes', int(env.CANON_COMPRESSION_THRESHOLD, 'CANON_COMPRESSION_THRESHOLD'));
  set('publicUrl', env.CANON_PUBLIC_URL || undefined);
  set('tokenTtlSeconds', int(env.CANON_TOKEN_TTL, 'CANON_TOKEN_TTL'));
  set('sessionPolicy', oneOf(env.CANON_SESSION_POLICY, 'CANON_SESSION_POLICY', SESSION_POLICIES));
  set('sessionIdleSeconds', int(env.CANON_SESSION_IDLE_TIMEOUT, 'CANON_SESSION_IDLE_TIMEOUT'));
  set('sessionAbsoluteSeconds', int(env.CANON_SESSION_ABSOLUTE_TIMEOUT, 'CANON_SESSION_ABSOLUTE_TIMEOUT'));
  set('maxSessionsPerUser', int(env.CANON_MAX_SESSIONS_PER_USER, 'CANON_MAX_SESSIONS_PER_USER'));
  set('csrfMode', oneOf(env.CANON_CSRF_MODE, 'CANON_CSRF_MODE', ['synchronizer', 'double-submit'] as const));
  if (env.CANON_TRUSTED_ORIGINS) out.trustedOrigins = trustedOrigins(env.CANON_TRUSTED_ORIGINS);
  set('tls', tlsFrom(env.CANON_TLS_CERT, env.CANON_TLS_KEY, env.CANON_TLS_CLIENT_CA));
  if (env.CANON_HSTS !== undefined && env.CANON_HSTS !== '') {
    if (env.CANON_HSTS !== 'auto' && env.CANON_HSTS !== 'off' && !/^max-age=\d+(\s*;\s*(includeSubDomains|preload))*$/i.test(env.CANON_HSTS)) {
      throw new Error(`CANON_HSTS must be auto, off or a Strict-Transport-Security value such as "max-age=31536000; includeSubDomains", got "${env.CANON_HSTS}"`);
    }
    out.hsts = env.CANON_HSTS;
  }
  set('idempotencyTtlSeconds', int(env.CANON_IDEMPOTENCY_TTL, 'CANON_IDEMPOTENCY_TTL'));
  set('idempotencyPurgeIntervalSeconds', int(env.CANON_IDEMPOTENCY_PURGE_INTERVAL, 'CANON_IDEMPOTENCY_PURGE_INTERVAL'));
  set('authCacheTtlMs', int(env.CANON_AUTH_CACHE_TTL_MS, 'CANON_AUTH_CACHE_TTL_MS'));
  set('eventRetentionDays', int(env.CANON_EVENT_RETENTION_DAYS, 'CANON_EVENT_RETENTION_DAYS'));
  set('eventPollMs', int(env.CANON_EVENT_POLL_MS, 'CANON_EVENT_POLL_MS'));
  set('sseHeartbeatSeconds', int(env.CANON_SSE_HEARTBEAT, 'CANON_SSE_HEARTBEAT'));
  set('sseRetryMs', int(env.CANON_SSE_RETRY_MS, 'CANON_SSE_RETRY_MS'));
  set('sseBufferBytes', int(env.CANON_SSE_BUFFER_BYTES, 'CANON_SSE_BUFFER_BYTES'));
  set('sseMaxStreamsPerPrincipal', int(env.CANON_SSE_MAX_STREAMS_PER_PRINCIPAL, 'CANON_SSE_MAX_STREAMS_PER_PRINCIPAL'));
  set('sseMaxStreamsPerUser', int(env.CANON_SSE_MAX_STREAMS_PER_USER, 'CANON_SSE_MAX_STREAMS_PER_USER'));
  set('worker', oneOf(env.CANON_WORKER, 'CANON_WORKER', ['embedded', 'off'] as const));
  set('webhookAllowPrivate', onOff(env.CANON_WEBHOOK_ALLOW_PRIVATE, 'CANON_WEBHOOK_ALLOW_PRIVATE'));
  set('webhookRetrySchedule', env.CANON_WEBHOOK_RETRY_SCHEDULE || undefined);
  set('webhookTimeoutMs', int(env.CANON_WEBHOOK_TIMEOUT_MS, 'CANON_WEBHOOK_TIMEOUT_MS'));
  set('operationTimeoutMs', int(env.CANON_OPERATION_TIMEOUT_MS, 'CANON_OPERATION_TIMEOUT_MS'));
  set('workerLeaseMs', int(env.CANON_WORKER_LEASE_MS, 'CANON_WORKER_LEASE_MS'));
  set('versioning', oneOf(env.CANON_VERSIONING?.toLowerCase(), 'CANON_VERSIONING', VERSIONING_STRATEGIES));
  set('versionSunset', oneOf(env.CANON_VERSION_SUNSET?.toLowerCase(), 'CANON_VERSION_SUNSET', ['off', 'enforce'] as const));
  if (env.CANON_PASSWORD_COST) out.passwordCost = scryptCost(env.CANON_PASSWORD_COST, env.NODE_ENV === 'production');
  const concurrency = int(env.CANON_PASSWORD_CONCURRENCY, 'CANON_PASSWORD_CONCURRENCY');
  const queue = int(env.CANON_PASSWORD_QUEUE, 'CANON_PASSWORD_QUEUE');
  if (concurrency === 0) throw new Error('CANON_PASSWORD_CONCURRENCY must be at least 1');
  if (concurrency !== undefined || queue !== undefined)
    out.passwordWork = { concurrency: concurrency ?? DEFAULTS.passwordWork.concurrency, maxQueue: queue ?? DEFAULTS.passwordWork.maxQueue };
  const rate = (name: string) => (env[name] ? parseRate(env[name]!, name) : undefined);
  const limits = DEFAULTS.rateLimits;
  out.rateLimits = {
    enabled: onOff(env.CANON_RATE_LIMIT, 'CANON_RATE_LIMIT') ?? limits.enabled,
    algorithm: oneOf(env.CANON_RATE_LIMIT_ALGORITHM, 'CANON_RATE_LIMIT_ALGORITHM', ['token-bucket', 'sliding-window'] as const) ?? limits.algorithm,
    perPrincipal: rate('CANON_RATE_LIMIT_PER_PRINCIPAL') ?? limits.perPrincipal,
    perIp: rate('CANON_RATE_LIMIT_PER_IP') ?? limits.perIp,
    global: rate('CANON_RATE_LIMIT_GLOBAL') ?? limits.global,
    loginPerAccount: rate('CANON_RATE_LIMIT_LOGIN_PER_ACCOUNT') ?? limits.loginPerAccount,
    loginPerDevice: rate('CANON_RATE_LIMIT_LOGIN_PER_DEVICE') ?? limits.loginPerDevice,
    loginPerIp: rate('CANON_RATE_LIMIT_LOGIN_PER_IP') ?? limits.loginPerIp,
    ipv6Prefix: prefixLength(env.CANON_RATE_LIMIT_IPV6_PREFIX) ?? limits.ipv6Prefix,
  };
  const lag = int(env.CANON_MAX_EVENT_LOOP_DELAY_MS, 'CANON_MAX_EVENT_LOOP_DELAY_MS');
  const heap = int(env.CANON_MAX_HEAP_BYTES, 'CANON_MAX_HEAP_BYTES');
  if (lag !== undefined || heap !== undefined)
    out.overload = { ...DEFAULTS.overload, ...(lag !== undefined ? { maxEventLoopDelayMs: lag } : {}), ...(heap !== undefined ? { maxHeapUsedBytes: heap } : {}) };
  if (env.CANON_METRICS_LISTEN) out.metricsListen = listenAddress(env.CANON_METRICS_LISTEN, 'CANON_METRICS_LISTEN');
  if (env.CANON_TRUST_PROXY) out.trustProxy = env.CANON_TRUST_PROXY === 'true' ? true : env.CANON_TRUST_PROXY === 'false' ? false : env.CANON_TRUST_PROXY;
  set('seed', onOff(env.CANON_SEED, 'CANON_SEED'));
  set('graphqlMaxDepth', int(env.CANON_GRAPHQL_MAX_DEPTH, 'CANON_GRAPHQL_MAX_DEPTH'));
  set('graphqlMaxCost', int(env.CANON_GRAPHQL_MAX_COST, 'CANON_GRAPHQL_MAX_COST'));
  set('graphqlCostPerRequest', int(env.CANON_GRAPHQL_COST_PER_REQUEST, 'CANON_GRAPHQL_COST_PER_REQUEST'));
  set('graphqlIntrospection', onOff(env.CANON_GRAPHQL_INTROSPECTION, 'CANON_GRAPHQL_INTROSPECTION'));
  set('graphqlPersistedQueries', env.CANON_GRAPHQL_PERSISTED_QUERIES || undefined);
  set('graphqlAnswerCache', onOff(env.CANON_GRAPHQL_ANSWER_CACHE, 'CANON_GRAPHQL_ANSWER_CACHE'));
  set('listCache', onOff(env.CANON_LIST_CACHE, 'CANON_LIST_CACHE'));
  return out;
}

export function resolveConfig(...layers: Array<Partial<Config>>): Config {
  const config: Config = { ...DEFAULTS };
  for (const layer of layers) Object.assign(config, Object.fromEntries(Object.entries(layer).filter(([, v]) => v !== undefined)));
  if (config.production) config.seed = false;
  // A lease shorter than an attempt would let a second worker take a delivery still being attempted.
  if (config.workerLeaseMs <= config.webhookTimeoutMs) {
    throw new Error(`CANON_WORKER_LEASE_MS (${config.workerLeaseMs}) must be longer than CANON_WEBHOOK_TIMEOUT_MS (${config.webhookTimeoutMs})`);
  }
  for (const [name, value] of [
    ['CANON_GRAPHQL_MAX_DEPTH', config.graphqlMaxDepth],
    ['CANON_GRAPHQL_MAX_COST', config.graphqlMaxCost],
    ['CANON_GRAPHQL_COST_PER_REQUEST', config.graphqlCostPerRequest],
  ] as const) {
    if (value < 1) throw new Error(`${name} must be at least 1`);
  }
  // Likewise for operations: a payment still being attempted must not be taken and attempted again by another worker.
  if (config.operationTimeoutMs < 1) throw new Error('CANON_OPERATION_TIMEOUT_MS must be at least 1');
  if (config.workerLeaseMs <= config.operationTimeoutMs) {
    throw new Error(`CANON_WORKER_LEASE_MS (${config.workerLeaseMs}) must be longer than CANON_OPERATION_TIMEOUT_MS (${config.operationTimeoutMs})`);
  }
  return config;
}
