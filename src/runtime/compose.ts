// The composition root of a serving process: the core (config → store, counters, fan-out, services), the API role and the embedded worker role.
import type { Config } from '../config/config.js';
import type { Counters } from '../counters/types.js';
import type { FanOut } from '../fanout/types.js';
import type { SigningKeys } from '../auth/signing-keys.js';
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { Catalog } from '../catalog/catalog.js';
import type { HttpApp } from '../http/transport/app.js';
import { compileModel, type CompiledModel } from '../model/compile.js';
import type { AppDef } from '../model/types.js';
import type { Idempotency } from '../services/idempotency.js';
import type { ResourceService } from '../services/resource-service.js';
import type { Store } from '../store/types.js';
import { startApi, type ApiOptions } from './api-role.js';
import { appOf, withPlatform } from './app-def.js';
import { openCore, type CoreOptions } from './core.js';
import { openStore } from './open-store.js';
import { startWorker, type WorkerRole } from './worker-role.js';
import { startOperatorServer, type OperatorServer } from '../http/transport/operator-server.js';

export { loadAppDef, withPlatform } from './app-def.js';
export { EVENTS_CHANNEL } from './core.js';

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
  /** `http://host:port` of the CANON_METRICS_LISTEN listener, when there is one. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

export type RuntimeOptions = CoreOptions & ApiOptions;

export async function migrateOnly(config: Config, appDef?: AppDef): Promise<void> {
  const model = compileModel(withPlatform(await appOf(config, appDef)));
  const { store } = await openStore(config.databaseUrl, {
    poolSize: 1,
    sqliteSynchronous: config.sqliteSynchronous,
    pgPreparedStatements: config.pgPreparedStatements,
    listCache: config.listCache,
  });
  await store.migrate(model);
  await store.close();
}

export interface WorkerOptions extends CoreOptions {
  /** Serve /healthz, /readyz and /metrics here (`canon worker --port P`); without it, no HTTP at all. */
  http?: { host: string; port: number };
}

export interface WorkerProcess {
  /** Where /healthz, /readyz and /metrics are served, when asked for. */
  url: string | undefined;
  /** Drains the worker role (see WorkerRole.close), then stops serving HTTP and closes the core. */
  close(): Promise<void>;
}

/** `canon worker`: the worker role alone (deliveries, asynchronous actions, purges), and its operator server if asked for. */
export async function createWorker(config: Config, options: WorkerOptions = {}): Promise<WorkerProcess> {
  const core = await openCore(config, options);
  let worker: WorkerRole | undefined;
  let server: OperatorServer | undefined;
  try {
    worker = startWorker(core, false);
    if (options.http) {
      // Ready when the store answers, and Redis when configured (this process's wake-ups and counters go through it).
      const required: Record<string, () => Promise<boolean>> = { store: () => core.store.ping() };
      if (core.shared.backend === 'redis') required.redis = () => core.shared.counters.ping();
      server = await startOperatorServer({
        ...options.http,
        readiness: { required, optional: core.optionalChecks },
        metrics: core.metrics,
        log: core.log,
      });
    }
  } catch (err) {
    await worker?.close();
    await core.close();
    throw err;
  }
  const role = worker;
  return {
    url: server?.url,
    close: async () => {
      // The operator server answers while the role drains: an orchestrator sees the process alive until it ends.
      await role.close();
      await server?.close();
      await core.close();
    },
  };
}

/** `canon serve`: the API role and the worker role on one core; closing stops the worker, then HTTP, then the core. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const core = await openCore(config, options);
  try {
    const api = await startApi(core, options);
    // CANON_WORKER=off leaves deliveries, payments and purges to `canon worker` processes (DESIGN §9, §12).
    const worker = config.worker === 'off' ? undefined : startWorker(core, true);
    return {
      app: api.app,
      catalog: api.catalog,
      signingKeys: api.signingKeys,
      generatedAdminKey: api.generatedAdminKey,
      seeded: api.seeded,
      metricsUrl: api.metricsUrl,
      store: core.store,
      idempotency: core.idempotency,
      services: core.services,
      model: core.model,
      config,
      counters: core.shared.counters,
      fanout: core.shared.fanout,
      passwords: core.passwords,
      close: async () => {
        await worker?.close();
        await api.close();
        await core.close();
      },
    };
  } catch (err) {
    await core.close();
    throw err;
  }
}
