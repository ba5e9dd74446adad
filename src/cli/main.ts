#!/usr/bin/env node
// The `canon` command: serve, worker, migrate, keys, openapi, graphql-schema and check.
//
// Each command imports what it runs when it runs (the `await import` below): `canon check`, `canon openapi` and
// `canon graphql-schema` never load the server (Fastify, the stores, the workers), and `--help` loads nothing but
// the configuration.
import { parseArgs } from 'node:util';
import { fromEnv, resolveConfig, tlsFrom, VERSIONING_STRATEGIES, type Config, type VersioningStrategy } from '../config/config.js';
import { loadConfigFile, withFile } from '../config/config-file.js';
import type { AppDef } from '../model/types.js';
import { writeFileSync } from 'node:fs';

const USAGE = `usage: canon <command> [options]

commands:
  serve            serve the API (default); with CANON_WORKER=embedded (default) also the workers
  worker           run the workers only: webhook deliveries, asynchronous actions, purges (CANON_WORKER=off on the API
                   processes), until SIGTERM; with --port, /healthz, /readyz and /metrics on it (no HTTP server without)
  migrate          create or update the schema, then exit
  keys create      create an API key and print its secret once
  keys rotate-signing  make a new bearer-token signing key; the old one stays published until its tokens expire
  openapi          print the OpenAPI 3.1 document of a version (the newest without --version), as served
  graphql-schema   print the GraphQL schema (SDL) the server serves at /graphql, as committed in docs/schema.graphql
  check <base-url> audit any HTTP API against the conventions (canon check --help, docs/check.md)

options:
  --port N         listen port (PORT, default 3000); worker: the operator port, only when given (0: a free one)
  --host H         listen address (HOST, default 127.0.0.1)
  --db URL         sqlite:<path>, sqlite::memory: or postgres://… (DATABASE_URL)
  --redis URL      redis://… for counters and event fan-out shared by processes (REDIS_URL)
  --config FILE    resource definition module (CANON_CONFIG)
  --config-file FILE  settings file (CANON_CONFIG_FILE; default: canon.config.ts, .js or .json in this directory)
  --versioning S   how requests name their API version: path, query, header, media-type or date (CANON_VERSIONING)
  --tls-cert FILE  serve HTTPS with this certificate (CANON_TLS_CERT)
  --tls-key FILE   and this private key (CANON_TLS_KEY)
  --tls-client-ca FILE  ask for client certificates signed by this CA: mutual TLS (CANON_TLS_CLIENT_CA)
  --name TEXT      keys create: the key's name
  --user ID        keys create: bind the key to this user (otherwise an admin key)
  --version N      openapi: the version, 1 or v1 (default: the newest)
  --out FILE       openapi, graphql-schema: write to FILE instead of standard output
  -h, --help       show this help`;

/** Flags over the environment over the configuration file over the defaults (docs/configuration.md). */
async function configFrom(values: Record<string, string | boolean | undefined>): Promise<Config> {
  const flags: Partial<Config> = {};
  if (typeof values.port === 'string') {
    if (!/^\d+$/.test(values.port)) throw new Error('--port must be a number');
    flags.port = Number(values.port);
  }
  if (typeof values.host === 'string') flags.host = values.host;
  if (typeof values.db === 'string') flags.databaseUrl = values.db;
  if (typeof values.redis === 'string') flags.redisUrl = values.redis;
  if (typeof values.versioning === 'string') {
    const strategy = values.versioning.toLowerCase() as VersioningStrategy;
    if (!VERSIONING_STRATEGIES.includes(strategy)) throw new Error(`--versioning must be one of ${VERSIONING_STRATEGIES.join(', ')}, got "${values.versioning}"`);
    flags.versioning = strategy;
  }
  const file = await loadConfigFile(process.cwd(), (values['config-file'] as string | undefined) ?? (process.env.CANON_CONFIG_FILE || undefined));
  const env = fromEnv(withFile(file, process.env));
  if (values['tls-cert'] !== undefined || values['tls-key'] !== undefined || values['tls-client-ca'] !== undefined) {
    flags.tls = tlsFrom(
      (values['tls-cert'] as string | undefined) ?? env.tls?.certFile,
      (values['tls-key'] as string | undefined) ?? env.tls?.keyFile,
      (values['tls-client-ca'] as string | undefined) ?? env.tls?.clientCaFile,
    );
  }
  if (typeof values.config === 'string') flags.configModule = values.config;
  return resolveConfig(env, flags);
}

async function serve(config: Config): Promise<void> {
  const { createRuntime } = await import('../runtime/compose.js');
  const runtime = await createRuntime(config, { appDef: await appFor(config) });
  const address = await runtime.app.listen({ port: config.port, host: config.host });
  const base = (config.tls ? address.replace(/^http:/, 'https:') : address).replace('[::1]', 'localhost');
  // What this app serves, from its catalog: the newest version, and a collection to try.
  const version = runtime.model.versions[0]!.name;
  const firstList = runtime.catalog.operations.find((op) => op.kind === 'list' && op.version === version && !op.parent && op.resource !== runtime.model.users);
  console.log(`Canon is serving ${base}/${version} (database ${redact(config.databaseUrl)}${config.redisUrl ? `, redis ${redact(config.redisUrl)}` : ''})`);
  console.log(`  health: ${base}/healthz`);
  console.log(`  docs: ${base}/docs`);
  if (runtime.metricsUrl) console.log(`  metrics: ${runtime.metricsUrl}/metrics (CANON_METRICS_LISTEN, no credentials)`);
  if (runtime.seeded) console.log(config.configModule ? '  seeded the app’s demo data' : '  seeded demo data (users ada@, bob@, cleo@example.com; products; orders; reviews)');
  if (runtime.generatedAdminKey)
    console.log(
      `  development admin API key: ${runtime.generatedAdminKey}${firstList ? `\n  try: curl -H "X-API-Key: ${runtime.generatedAdminKey}" ${base}${firstList.path}` : ''}`,
    );
  const stop = async (): Promise<void> => {
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

/**
 * `canon worker [--port P]` (DESIGN §9): runs until SIGTERM or SIGINT, however idle. Its timers never hold the
 * process (they are unref'd, so that tests and embedders can stop without them), so a worker with no HTTP
 * server holds it with a timer of its own. `port`: serve /healthz, /readyz and /metrics on it (0: a free one).
 */
async function work(config: Config, port: number | undefined): Promise<void> {
  const { createWorker } = await import('../runtime/compose.js');
  const worker = await createWorker(config, { appDef: await appFor(config), ...(port !== undefined ? { http: { host: config.host, port } } : {}) });
  const held = setInterval(() => undefined, 1 << 30);
  console.log(`Canon worker running (database ${redact(config.databaseUrl)}${config.redisUrl ? `, redis ${redact(config.redisUrl)}` : ''})`);
  console.log(
    worker.url ? `  health: ${worker.url}/healthz, ${worker.url}/readyz, metrics: ${worker.url}/metrics` : '  no HTTP server (give --port to serve /healthz, /readyz and /metrics)',
  );
  // SIGTERM drains: attempts and actions under way finish and are recorded, deliveries claimed but not yet attempted
  // are released at once. Past the bound (an attempt's timeout and then some), or at a second signal, it exits
  // anyway: what it still holds is taken again when the lease ends.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      console.error(`canon worker: ${signal} again, exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    const limitMs = config.webhookTimeoutMs + DRAIN_SLACK_MS;
    setTimeout(() => {
      console.error(`canon worker: still draining after ${limitMs / 1000} s, exiting; its claims are taken again when their lease ends`);
      process.exit(1);
    }, limitMs).unref();
    worker
      .close()
      .then(() => {
        clearInterval(held);
        process.exit(0);
      })
      .catch((err: unknown) => {
        console.error(`canon worker: stopping failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** How long a stopping worker may take beyond one delivery attempt's timeout (the recording, an action's settling). */
const DRAIN_SLACK_MS = 10_000;

/** The app `canon` serves: the module CANON_CONFIG / --config names, else the reference commerce API. */
async function appFor(config: Config): Promise<AppDef> {
  if (config.configModule) return (await import('../runtime/app-def.js')).loadAppDef(config.configModule);
  return (await import('../../examples/commerce/index.js')).commerce;
}

/** Hides the password of a connection URL before it is printed. */
function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

async function createKey(config: Config, name: string | undefined, userId: string | undefined): Promise<void> {
  const [{ compileModel }, { withPlatform }, { openStore }, { ResourceService }, { PasswordHasher }, { SYSTEM }] = await Promise.all([
    import('../model/compile.js'),
    import('../runtime/app-def.js'),
    import('../runtime/open-store.js'),
    import('../services/resource-service.js'),
    import('../auth/password-hasher.js'),
    import('../model/principal.js'),
  ]);
  const model = compileModel(withPlatform(await appFor(config)));
  const { store } = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  await store.migrate(model);
  const services = new ResourceService(store, model, () => new Date(), new PasswordHasher(config.passwordCost, config.passwordWork));
  const created = await services.create({ principal: SYSTEM }, 'api-keys', { name: name ?? 'cli key', ...(userId ? { user_id: userId } : {}) });
  console.log(`created API key ${created.record.id}${userId ? ` for user ${userId}` : ' (admin)'}\n${String(created.reveal.key)}`);
  await store.close();
}

/** `canon openapi`: the document a server with this configuration serves, without opening a store. */
async function printOpenApi(config: Config, version: string | undefined, out: string | undefined): Promise<void> {
  const [{ compileModel, newestVersion }, { withPlatform }, { committedForm, renderOpenApi }, { cookieNames }] = await Promise.all([
    import('../model/compile.js'),
    import('../runtime/app-def.js'),
    import('../openapi/render.js'),
    import('../auth/session-cookies.js'),
  ]);
  const model = compileModel(withPlatform(await appFor(config)));
  const body = renderOpenApi({
    model,
    version: version ?? newestVersion(model).name,
    strategy: config.versioning,
    sessionCookie: cookieNames(config.production).session,
  });
  if (out === undefined) process.stdout.write(committedForm(body));
  else {
    writeFileSync(out, committedForm(body));
    console.error(`wrote ${out}`);
  }
}

/** `canon graphql-schema`: the SDL a server with this configuration serves, without opening a store. */
async function printGraphqlSchema(config: Config, out: string | undefined): Promise<void> {
  const [{ compileModel }, { withPlatform }, { buildCatalog }, { printSdl }] = await Promise.all([
    import('../model/compile.js'),
    import('../runtime/app-def.js'),
    import('../catalog/catalog.js'),
    import('../graphql/sdl.js'),
  ]);
  const model = compileModel(withPlatform(await appFor(config)));
  const sdl = printSdl(model, buildCatalog(model));
  if (out === undefined) process.stdout.write(sdl);
  else {
    writeFileSync(out, sdl);
    console.error(`wrote ${out}`);
  }
}

async function main(argv: string[]): Promise<void> {
  // `check` has options of its own and needs no Canon configuration (src/check/options.ts).
  if (argv[0] === 'check') {
    const { checkCommand } = await import('../check/command.js');
    process.exitCode = await checkCommand(argv.slice(1));
    return;
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      db: { type: 'string' },
      redis: { type: 'string' },
      config: { type: 'string' },
      'config-file': { type: 'string' },
      versioning: { type: 'string' },
      name: { type: 'string' },
      user: { type: 'string' },
      version: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-client-ca': { type: 'string' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const config = await configFrom(values);
  const [command = 'serve', sub] = positionals;
  if (command === 'serve') return serve(config);
  if (command === 'worker') return work(config, values.port === undefined ? undefined : config.port);
  if (command === 'migrate') {
    const { migrateOnly } = await import('../runtime/compose.js');
    await migrateOnly(config, await appFor(config));
    console.log(`migrated ${config.databaseUrl}`);
    return;
  }
  if (command === 'openapi') return printOpenApi(config, values.version, values.out);
  if (command === 'graphql-schema') return printGraphqlSchema(config, values.out);
  if (command === 'keys' && sub === 'create') return createKey(config, values.name, values.user);
  if (command === 'keys' && sub === 'rotate-signing') {
    const { createRuntime } = await import('../runtime/compose.js');
    const runtime = await createRuntime({ ...config, seed: false }, { appDef: await appFor(config) });
    const kid = await runtime.signingKeys.rotate();
    console.log(`new signing key ${kid}; the previous key stays in the JWKS until the tokens it signed expire`);
    await runtime.close();
    return;
  }
  throw new Error(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`canon: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
