// The API role: on the core, the credentials (admin key, sessions, tokens), the demo seed, the catalog and the HTTP app.
import { Authenticator } from '../auth/authenticator.js';
import { ClientCredentialsGrant } from '../auth/client-credentials.js';
import { CredentialCache } from '../auth/credential-cache.js';
import { DeviceCookies } from '../auth/device-cookies.js';
import type { ClientGrant } from '../auth/oauth-clients.js';
import { cookieNames, sessionCookie } from '../auth/session-cookies.js';
import { SessionManager } from '../auth/sessions.js';
import { SigningKeys } from '../auth/signing-keys.js';
import { TokenService } from '../auth/tokens.js';
import { buildCatalog, type Catalog } from '../catalog/catalog.js';
import { FailoverCounters } from '../counters/failover-counters.js';
import { MemoryCounters } from '../counters/memory-counters.js';
import { buildHttpApp, type HttpApp } from '../http/transport/app.js';
import { startMetricsListener, type MetricsListener } from '../http/transport/metrics-listener.js';
import { RateLimiter } from '../limits/rate-limiter.js';
import type { Principal } from '../model/principal.js';
import { generateApiKey } from '../platform/api-key-secrets.js';
import { IdempotentExecution } from '../services/idempotent.js';
import { ListPages } from '../services/list-pages.js';
import { PasswordChanges } from '../services/password-change.js';
import { Sessions } from '../services/sessions.js';
import type { Commit } from '../store/types.js';
import { ensureAdminKey } from './admin-key.js';
import type { Core } from './core.js';
import { existingValue, keepBeside } from './data-dir.js';
import { seedIfEmpty } from './seed.js';
import { whileBusy } from './while-busy.js';
import { EventFeed } from '../services/event-feed.js';
import { EventHub } from '../events/hub.js';
import { StreamGuard } from '../events/stream-guard.js';
import { eventView } from '../events/event-view.js';
import { GraphqlEngine } from '../graphql/engine.js';
import { VisibleBatches } from '../services/visible-batches.js';
import { persistedQueries } from './persisted-queries.js';

export interface ApiOptions {
  /** Called with the HTTP app before it is ready: add Fastify plugins, hooks or routes of your own. */
  configureHttp?: (app: HttpApp) => void | Promise<void>;
}

export interface ApiRole {
  app: HttpApp;
  catalog: Catalog;
  signingKeys: SigningKeys;
  /** The development admin key when Canon generated it (printed at start). */
  generatedAdminKey: string | undefined;
  seeded: boolean;
  /** `http://host:port` of the CANON_METRICS_LISTEN listener, when there is one. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

export async function startApi(core: Core, options: ApiOptions = {}): Promise<ApiRole> {
  const { config, model, store, services, clock, passwords, secret, shared, log } = core;
  let generatedAdminKey: string | undefined;
  const adminApiKey = config.adminApiKey;
  if (adminApiKey) {
    await whileBusy(() => ensureAdminKey(services, model, adminApiKey, 'admin (CANON_ADMIN_API_KEY)', clock().toISOString()));
  } else if (!config.production) {
    // In the store's meta table, like the generated secret (core.ts): processes starting at once on one database
    // agree on one key, and a restart prints the same one. A key an earlier build kept beside the SQLite file wins;
    // the file is kept for `cat data/.dev-admin-key` (docs/guide.md).
    const candidate = existingValue(core.file, '.dev-admin-key') ?? generateApiKey();
    const key = await whileBusy(() => store.metaValue('development_admin_key', candidate));
    generatedAdminKey = key;
    keepBeside(core.file, '.dev-admin-key', key);
    await whileBusy(() => ensureAdminKey(services, model, key, 'admin (development)', clock().toISOString()));
  }
  const seeded = config.seed ? await seedIfEmpty(core.appDef, store, services) : false;

  // The issuer is the public URL, or else the address the server listens on (known once it listens).
  const built: { app?: HttpApp } = {};
  const issuer = (): string => {
    if (config.publicUrl) return config.publicUrl.replace(/\/$/, '');
    const address = built.app?.server.address();
    const scheme = config.tls ? 'https' : 'http';
    if (address && typeof address === 'object') return `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    return `${scheme}://${config.host}:${config.port}`;
  };
  // Platform writers commit through the services like every resource change does.
  const commit: Commit = (fn) => services.commit(fn);
  const signingKeys = new SigningKeys(store, secret, clock, config.tokenTtlSeconds + 60, commit);
  const tokens = new TokenService(signingKeys, { ttlSeconds: config.tokenTtlSeconds, issuer, audience: issuer }, clock);
  const sessions = new SessionManager(
    store,
    model.users,
    {
      timeouts: { policy: config.sessionPolicy, idleSeconds: config.sessionIdleSeconds, absoluteSeconds: config.sessionAbsoluteSeconds },
      maxPerUser: config.maxSessionsPerUser,
      passwords,
    },
    clock,
    commit,
  );
  const names = cookieNames(config.production);
  // Keys and clients are cached until the store's credentials epoch moves: a revocation anywhere is seen at once.
  const caches = { keys: new CredentialCache<Principal>(config.authCacheTtlMs), clients: new CredentialCache<ClientGrant | null>(config.authCacheTtlMs) };
  const auth = new Authenticator(store, model.users, tokens, sessions, names, (id, maxAge) => sessionCookie(names, id, maxAge), caches);
  const catalog = buildCatalog(model);
  if (shared.backend === 'redis') core.optionalChecks.redis = () => shared.counters.ping();
  // One reader of the log for every stream of this process, woken by commits anywhere (src/runtime/event-signal.ts).
  const hub = new EventHub(store, {
    pollMs: config.eventPollMs,
    heartbeatMs: config.sseHeartbeatSeconds * 1000,
    ringSize: 4096,
    batch: 500,
    onError: (err) => log.warn({ err }, 'event hub'),
  });
  const stopWaking = core.events.on(() => hub.wake());
  // Each tick: stamp what a writer that died after its commit left unsequenced (PostgreSQL), then re-check credentials of streams.
  hub.onTick(async () => {
    await store.sequenceEvents();
  });
  // Every stream's visibility follows its principal as it is now: decided again before events are sent past a credential change.
  const guard = new StreamGuard(hub, () => store.credentialEpoch(), 60_000);
  hub.guardWith(() => guard.current());
  hub.onTick(guard.tick);
  await hub.start();
  core.metrics.gauge('canon_event_streams', 'Server-Sent Events streams open on this process.', () => hub.size);
  const limiter = new RateLimiter(
    shared.backend === 'redis' ? new FailoverCounters(shared.counters, new MemoryCounters(), (m) => log.warn(m)) : shared.counters,
    config.rateLimits,
  );
  const pages = new ListPages(services, secret);
  // One idempotent execution for both front ends: a key is held across REST and GraphQL alike.
  const idempotent = new IdempotentExecution(core.idempotency);
  // The second front end on the same services (DESIGN §7): its schema is built once, from the model and the catalog.
  // One feed for REST's /events and GraphQL's subscriptions: the same starts, visibility and cursors.
  const feed = new EventFeed(store, model, secret);
  const graphql = new GraphqlEngine(
    { model, catalog, services, pages, batches: new VisibleBatches(store, model), secret, idempotency: idempotent, feed, eventView },
    {
      maxDepth: config.graphqlMaxDepth,
      maxCost: config.graphqlMaxCost,
      costPerRequest: config.graphqlCostPerRequest,
      introspection: config.graphqlIntrospection ?? !config.production,
      persisted: persistedQueries(config.graphqlPersistedQueries),
      answerCache: config.graphqlAnswerCache,
    },
  );
  const app = await buildHttpApp({
    catalog,
    model,
    services,
    config,
    secret,
    auth,
    clientCredentials: new ClientCredentialsGrant(store, tokens),
    signingKeys,
    sessions: new Sessions(sessions),
    cookieNames: names,
    issuer,
    pages,
    graphql,
    passwordChanges: new PasswordChanges(services, passwords, sessions, model.users),
    deviceCookies: new DeviceCookies(secret, names),
    idempotent,
    readiness: { required: { store: () => store.ping() }, optional: core.optionalChecks },
    limiter,
    log,
    metrics: core.metrics,
    now: () => clock().getTime(),
    events: {
      feed,
      hub,
      retryMs: config.sseRetryMs,
      maxBufferBytes: config.sseBufferBytes,
      maxStreamsPerPrincipal: config.sseMaxStreamsPerPrincipal,
      maxStreamsPerUser: config.sseMaxStreamsPerUser,
    },
  });
  built.app = app;
  // Embedding code adds its own plugins and hooks here; the lean read path stands aside for any it cannot vouch for.
  await options.configureHttp?.(app);
  await app.ready();
  // The operator's address for the metrics alone (CANON_METRICS_LISTEN): no credentials, counted per client address.
  let metricsListener: MetricsListener | undefined;
  if (config.metricsListen) {
    try {
      metricsListener = await startMetricsListener(core.metrics, config.metricsListen, config, {
        ...(config.rateLimits.enabled ? { limit: (ip: string) => limiter.forIp(ip) } : {}),
        log,
      });
    } catch (err) {
      stopWaking();
      await hub.close();
      await app.close();
      throw err;
    }
  }
  const close = async (): Promise<void> => {
    await metricsListener?.close();
    stopWaking();
    // Streams end first (clients resume elsewhere by Last-Event-ID); an open stream would hold the server's close.
    await hub.close();
    await app.close();
  };
  return { app, catalog, signingKeys, generatedAdminKey, seeded, metricsUrl: metricsListener?.url, close };
}
