// The composition root: config → store → model → services → HTTP app; nothing else wires adapters together.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { generateApiKey } from '../platform/api-key-secrets.js';
import { CredentialCache } from '../auth/credential-cache.js';
import type { Config } from '../config/config.js';
import { buildHttpApp, type HttpApp } from '../http/app.js';
import { Authenticator } from '../auth/authenticator.js';
import type { ClientGrant } from '../auth/oauth-clients.js';
import type { Principal } from '../model/principal.js';
import { DeviceCookies } from '../auth/device-cookies.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { cookieNames, sessionCookie } from '../auth/session-cookies.js';
import { SessionManager } from '../auth/sessions.js';
import { SigningKeys } from '../auth/signing-keys.js';
import { TokenService } from '../auth/tokens.js';
import { compileModel, type CompiledModel } from '../model/compile.js';
import type { AppDef } from '../model/types.js';
import { apiKeysResource } from '../platform/api-keys.js';
import { sessionsResource, signingKeysResource } from '../platform/internal.js';
import { oauthClientsResource } from '../platform/oauth-clients.js';
import { Idempotency } from '../services/idempotency.js';
import { FailoverCounters } from '../counters/failover-counters.js';
import { MemoryCounters } from '../counters/memory-counters.js';
import { RateLimiter } from '../limits/rate-limiter.js';
import { ResourceService } from '../services/resource-service.js';
import { ListPages } from '../services/list-pages.js';
import { PasswordChanges } from '../services/password-change.js';
import type { Store } from '../store/types.js';
import { buildCatalog, type Catalog } from '../catalog/catalog.js';
import { ensureAdminKey } from './admin-key.js';
import { existingValue, persistentValue, randomSecret } from './data-dir.js';
import { openShared } from './open-shared.js';
import { createLogger } from './logger.js';
import { schedulePurge } from './purge-schedule.js';
import { openStore } from './open-store.js';
import type { Counters } from '../counters/types.js';
import type { FanOut } from '../fanout/types.js';
import type { StoredEvent } from '../store/types.js';
import type { DestinationStream } from 'pino';

/** The fan-out channel carrying committed events. */
export const EVENTS_CHANNEL = 'events';
import { seedIfEmpty } from './seed.js';

export interface Runtime {
  app: HttpApp;
  /** Every operation the app serves (src/catalog/catalog.ts). */
  catalog: Catalog;
  store: Store;
  idempotency: Idempotency;
  signingKeys: SigningKeys;
  services: ResourceService;
  model: CompiledModel;
  config: Config;
  counters: Counters;
  fanout: FanOut;
  /** The process's bounded queue of password hashes and checks. */
  passwords: PasswordHasher;
  /** The development admin key when Canon generated it (printed at start). */
  generatedAdminKey: string | undefined;
  seeded: boolean;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  appDef?: AppDef;
  logger?: boolean;
  /** Where log lines go instead of stdout (tests read them). */
  logDestination?: DestinationStream;
  clock?: () => Date;
  /** Called with the HTTP app before it is ready: add Fastify plugins, hooks or routes of your own. */
  configureHttp?: (app: HttpApp) => void | Promise<void>;
}

/** Loads the resource definition module named by CANON_CONFIG / --config; its default export is the app. */
export async function loadAppDef(modulePath: string): Promise<AppDef> {
  const mod = (await import(pathToFileURL(resolve(modulePath)).href)) as { default?: AppDef };
  if (!mod.default) throw new Error(`${modulePath} must export the app definition (defineApp(...)) as its default export`);
  return mod.default;
}

/**
 * Adds the platform resources every Canon app has. The users resource stands behind credentials: a role
 * or password change ends the cached credentials of every process (ResourceDef.credentialFields).
 */
export function withPlatform(app: AppDef): AppDef {
  const resources = app.resources.map((r) => (r.name === app.users && r.credentialFields === undefined ? { ...r, credentialFields: ['role', 'password_hash'] } : r));
  return { ...app, resources: [...resources, apiKeysResource(app.users), oauthClientsResource(), sessionsResource(app.users), signingKeysResource()] };
}

/** The app to serve: the one given, else the module CANON_CONFIG names. Which app is the default is the caller's choice (the CLI serves the reference app). */
async function appOf(config: Config, appDef: AppDef | undefined): Promise<AppDef> {
  if (appDef) return appDef;
  if (config.configModule) return loadAppDef(config.configModule);
  throw new Error('No app to serve: pass an app definition, or name its module with CANON_CONFIG / --config.');
}

export async function migrateOnly(config: Config, appDef?: AppDef): Promise<void> {
  const model = compileModel(withPlatform(await appOf(config, appDef)));
  const { store } = openStore(config.databaseUrl, { poolSize: 1, sqliteSynchronous: config.sqliteSynchronous });
  await store.migrate(model);
  await store.close();
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = createLogger(config.logLevel, options.logger !== false, options.logDestination);
  const appDef = withPlatform(await appOf(config, options.appDef));
  const model = compileModel(appDef);
  const { store, file } = openStore(config.databaseUrl, { poolSize: config.dbPoolSize, sqliteSynchronous: config.sqliteSynchronous });
  await store.migrate(model);
  const shared = openShared(config.redisUrl, config.redisPrefix);
  const clock = options.clock ?? (() => new Date());
  // Committed events go to every process (their SSE clients, later); a failed publish never fails the write.
  const publish = (events: StoredEvent[]): void => {
    shared.fanout.publish(EVENTS_CHANNEL, JSON.stringify(events)).catch(() => undefined);
  };
  const passwords = new PasswordHasher(config.passwordCost, config.passwordWork);
  const services = new ResourceService(store, model, clock, passwords, publish);

  if (config.production && !config.secret) throw new Error('CANON_SECRET must be set in production (it signs cursors and must be shared by every process).');
  // Without CANON_SECRET (development only), the generated secret lives in the database, so every process and
  // every restart agree: cursors, idempotency fingerprints, sealed signing keys and device cookies survive
  // both. A SQLite deployment of an earlier build keeps the secret it wrote beside its file.
  const secret = config.secret ?? (await store.metaValue('generated_secret', existingValue(file, '.canon-secret') ?? randomSecret()));

  let generatedAdminKey: string | undefined;
  if (config.adminApiKey) {
    await ensureAdminKey(services, model, config.adminApiKey, 'admin (CANON_ADMIN_API_KEY)', clock().toISOString());
  } else if (!config.production) {
    generatedAdminKey = persistentValue(file, '.dev-admin-key', generateApiKey);
    await ensureAdminKey(services, model, generatedAdminKey, 'admin (development)', clock().toISOString());
  }
  const seeded = config.seed ? await seedIfEmpty(appDef, store, services) : false;

  // The issuer is the public URL, or else the address the server listens on (known once it listens).
  const built: { app?: HttpApp } = {};
  const issuer = (): string => {
    if (config.publicUrl) return config.publicUrl.replace(/\/$/, '');
    const address = built.app?.server.address();
    const scheme = config.tls ? 'https' : 'http';
    if (address && typeof address === 'object') return `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    return `${scheme}://${config.host}:${config.port}`;
  };
  const signingKeys = new SigningKeys(store, secret, clock, config.tokenTtlSeconds + 60);
  const tokens = new TokenService(signingKeys, { ttlSeconds: config.tokenTtlSeconds, issuer, audience: issuer }, clock);
  const sessions = new SessionManager(store, model.users, {
    timeouts: { policy: config.sessionPolicy, idleSeconds: config.sessionIdleSeconds, absoluteSeconds: config.sessionAbsoluteSeconds },
    maxPerUser: config.maxSessionsPerUser,
    passwords,
  }, clock);
  const idempotency = new Idempotency(store, secret, config.idempotencyTtlSeconds, clock);
  const names = cookieNames(config.production);
  // Keys and clients are cached until the store's credentials epoch moves: a revocation anywhere is seen at once.
  const caches = { keys: new CredentialCache<Principal>(config.authCacheTtlMs), clients: new CredentialCache<ClientGrant | null>(config.authCacheTtlMs) };
  const auth = new Authenticator(store, model.users, tokens, sessions, names, (id, maxAge) => sessionCookie(names, id, maxAge), caches);
  const catalog = buildCatalog(model);
  const app = await buildHttpApp({
    catalog, model, services, pages: new ListPages(services, secret), passwordChanges: new PasswordChanges(services, passwords, sessions, model.users), store, config, secret, auth, tokens, signingKeys, sessions, cookieNames: names, issuer,
    passwords,
    deviceCookies: new DeviceCookies(secret, names),
    idempotency,
    readiness: { required: { store: () => store.ping() }, optional: shared.backend === 'redis' ? { redis: () => shared.counters.ping() } : {} },
    limiter: new RateLimiter(
      shared.backend === 'redis' ? new FailoverCounters(shared.counters, new MemoryCounters(), (m) => log.warn(m)) : shared.counters,
      config.rateLimits,
    ),
    log,
  });
  built.app = app;
  // Embedding code adds its own plugins and hooks here; the lean read path stands aside for any it cannot vouch for.
  await options.configureHttp?.(app);
  await app.ready();
  const stopPurging = schedulePurge(idempotency, config.idempotencyPurgeIntervalSeconds, log);
  return {
    app, catalog, store, signingKeys, idempotency, services, model, config, generatedAdminKey, seeded, counters: shared.counters, fanout: shared.fanout, passwords,
    close: async () => {
      await stopPurging();
      await app.close();
      await store.close();
      await shared.counters.close();
      await shared.fanout.close();
    },
  };
}

