// The core every role of a process shares: config → the app's model, the store, counters and fan-out, the services and the secret.
import type { DestinationStream } from 'pino';
import { PasswordHasher } from '../auth/password-hasher.js';
import type { Config } from '../config/config.js';
import { compileModel, type CompiledModel } from '../model/compile.js';
import type { AppDef } from '../model/types.js';
import { Idempotency } from '../services/idempotency.js';
import { ResourceService } from '../services/resource-service.js';
import type { Store } from '../store/types.js';
import { appOf, withPlatform } from './app-def.js';
import { existingValue, randomSecret } from './data-dir.js';
import { createLogger, type Logger } from './logger.js';
import { keepTickObjectShape } from './tick-shape.js';
import { openShared, type Shared } from './open-shared.js';
import { openStore } from './open-store.js';
import { whileBusy } from './while-busy.js';

import { EventSignal } from './event-signal.js';
import { webhookEndpointOptions } from '../webhooks/endpoint-options.js';
import { Metrics } from '../lib/metrics.js';
export { EVENTS_CHANNEL } from './event-signal.js';

export interface CoreOptions {
  appDef?: AppDef;
  logger?: boolean;
  /** Where log lines go instead of stdout (tests read them). */
  logDestination?: DestinationStream;
  clock?: () => Date;
}

export interface Core {
  config: Config;
  log: Logger;
  /** The app as defined, with the platform's resources (src/runtime/app-def.ts). */
  appDef: AppDef;
  model: CompiledModel;
  store: Store;
  /** The SQLite file, when there is one: development conveniences are kept beside it. */
  file: string | undefined;
  /** Counters and fan-out: in this process, or on Redis for every process. */
  shared: Shared;
  /** Wakes what follows the event log (streams, webhook dispatch) when events may have been committed. */
  events: EventSignal;
  metrics: Metrics;
  /** Checks /readyz reports without failing on them (Redis, the embedded worker); roles add theirs. */
  optionalChecks: Record<string, () => Promise<boolean>>;
  clock: () => Date;
  passwords: PasswordHasher;
  services: ResourceService;
  idempotency: Idempotency;
  /** CANON_SECRET, or in development the one generated once and kept in the database. */
  secret: string;
  close(): Promise<void>;
}

/** Opens everything a role needs; the roles (src/runtime/api-role.ts, worker-role.ts) are composed on top. */
export async function openCore(config: Config, options: CoreOptions = {}): Promise<Core> {
  if (config.production && !config.secret) throw new Error('CANON_SECRET must be set in production (it signs cursors and must be shared by every process).');
  keepTickObjectShape();
  const log = createLogger(config.logLevel, options.logger !== false, options.logDestination);
  const app = await appOf(config, options.appDef);
  // Webhook secrets are sealed with the secret, known once the store is open (below).
  const secretRef: { value?: string } = {};
  const storeRef: { value?: Store } = {};
  const appDef = withPlatform(
    app,
    webhookEndpointOptions(
      config.webhookAllowPrivate,
      app,
      () => {
        if (secretRef.value === undefined) throw new Error('the secret is not known yet');
        return secretRef.value;
      },
      () => (storeRef.value ? storeRef.value.lastEventSequence() : Promise.reject(new Error('the store is not open yet'))),
    ),
  );
  const model = compileModel(appDef, { versionsInPath: config.versioning === 'path' });
  const { store, file } = await openStore(config.databaseUrl, {
    poolSize: config.dbPoolSize,
    sqliteSynchronous: config.sqliteSynchronous,
    pgPreparedStatements: config.pgPreparedStatements,
    listCache: config.listCache,
  });
  // Processes starting at once on one SQLite file take turns for its write lock (src/runtime/while-busy.ts).
  await whileBusy(() => store.migrate(model));
  storeRef.value = store;
  const shared = await openShared(config.redisUrl, config.redisPrefix);
  const clock = options.clock ?? (() => new Date());
  // A commit with events wakes every follower of the log, here and in the other processes; a failed publish never fails the write.
  const events = new EventSignal(shared.fanout, store);
  events.start((err) => log.warn({ err }, 'the event fan-out subscription failed: other processes’ events arrive by polling'));
  const passwords = new PasswordHasher(config.passwordCost, config.passwordWork);
  const metrics = new Metrics();
  const services = new ResourceService(store, model, clock, passwords, (written) => {
    metrics.eventsWritten.inc(written.length);
    events.committed();
  });
  // Without CANON_SECRET (development only), the generated secret lives in the database, so every process and
  // every restart agree: cursors, idempotency fingerprints, sealed signing keys and device cookies survive
  // both. A SQLite deployment of an earlier build keeps the secret it wrote beside its file.
  const secret = config.secret ?? (await whileBusy(() => store.metaValue('generated_secret', existingValue(file, '.canon-secret') ?? randomSecret())));
  secretRef.value = secret;
  const idempotency = new Idempotency(store, secret, config.idempotencyTtlSeconds, clock);
  return {
    config,
    log,
    appDef,
    model,
    store,
    file,
    shared,
    events,
    metrics,
    optionalChecks: {},
    clock,
    passwords,
    services,
    idempotency,
    secret,
    close: async () => {
      await events.close();
      await store.close();
      await shared.counters.close();
      await shared.fanout.close();
    },
  };
}
