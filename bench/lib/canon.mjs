// Canon as a benchmark target: its environment and start, fast seeding through the compiled store, CPU profiles.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { v7 as uuidv7 } from 'uuid';
import { CANON_CLI, READY_TIMEOUT_MS, ROOT, UNLIMITED_RATE, settings } from './options.mjs';
import { assertAlive, childEnv, request, startServer } from './processes.mjs';

/** Names this run's CPU profiles apart from earlier ones in the same directory. */
const RUN_STAMP = new Date().toISOString().replace(/[:.]/g, '-');
const profileFile = (name) => `${RUN_STAMP}-${name}.cpuprofile`;

/** Where Canon's profile `name` of this run is written (BENCH_CPU_PROF set). */
export const profileFileOf = (name) => path.join(settings.cpuProfileDir, profileFile(name));

/** A fixed secret so that cursors stay valid across restarts of the same data. */
const CANON_SECRET = 'bench-cursor-signing-secret-0123456789abcdef';

export function assertBuilt() {
  if (!existsSync(CANON_CLI)) throw new Error(`${path.relative(ROOT, CANON_CLI)} is missing: build first (npx tsc -p . or npm run build).`);
}

/** The environment every Canon process of a benchmark shares (serve and worker). */
function canonEnv({ databaseUrl, adminKey, seed, rateLimit, extraEnv }) {
  const env = childEnv({
    DATABASE_URL: databaseUrl,
    CANON_ADMIN_API_KEY: adminKey,
    CANON_SECRET,
    CANON_LOG_LEVEL: 'warn',
    CANON_SEED: seed ? '1' : '0',
    ...extraEnv,
  });
  if (rateLimit === 'off') {
    env.CANON_RATE_LIMIT = 'off';
  } else {
    delete env.CANON_RATE_LIMIT;
    Object.assign(env, { CANON_RATE_LIMIT_PER_PRINCIPAL: UNLIMITED_RATE, CANON_RATE_LIMIT_PER_IP: UNLIMITED_RATE, CANON_RATE_LIMIT_GLOBAL: UNLIMITED_RATE });
  }
  return env;
}

/** BENCH_CANON_NODE_ARGS: extra Node flags for every Canon process (space-separated), for experiments such as V8 flags. */
const EXTRA_NODE_ARGS = (process.env.BENCH_CANON_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

/** The Node flags a Canon process starts with: BENCH_CANON_NODE_ARGS, then the profiler's when BENCH_CPU_PROF is set. */
function nodeArgs(profileName) {
  if (!settings.cpuProfileDir) return EXTRA_NODE_ARGS;
  mkdirSync(settings.cpuProfileDir, { recursive: true });
  return [...EXTRA_NODE_ARGS, '--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`, `--cpu-prof-name=${profileFile(profileName)}`];
}

/**
 * Starts `canon serve` on 127.0.0.1:port. `rateLimit`: 'unlimited' (on, with limits no run reaches) or 'off'.
 * With BENCH_CPU_PROF set, Canon runs under `node --cpu-prof` and writes `<run time>-<profileName>.cpuprofile` there.
 * `cli` runs another build (a worktree of an earlier commit) instead of this checkout's; `nodeArgs` are Node flags
 * for this process only (a preload, a V8 flag).
 */
export function startCanon(
  port,
  {
    databaseUrl,
    adminKey,
    pinned,
    seed = false,
    rateLimit = 'unlimited',
    profileName = 'canon',
    name = 'Canon',
    env: extraEnv = {},
    cli = CANON_CLI,
    nodeArgs: extraNodeArgs = [],
  },
) {
  if (cli === CANON_CLI) assertBuilt();
  else if (!existsSync(cli)) throw new Error(`${cli} is missing: build that worktree first`);
  const env = canonEnv({ databaseUrl, adminKey, seed, rateLimit, extraEnv: { PORT: String(port), HOST: '127.0.0.1', ...extraEnv } });
  return startServer(name, cli, ['serve'], env, pinned, [...extraNodeArgs, ...nodeArgs(profileName)]);
}

/** Starts `canon worker` (no HTTP) and resolves once it says it is running; same environment rules as startCanon. `track` sees the process once spawned. */
export async function startCanonWorker({
  databaseUrl,
  adminKey,
  pinned,
  profileName = 'canon-worker',
  name = 'Canon worker',
  env: extraEnv = {},
  rateLimit = 'unlimited',
  core,
  track,
}) {
  assertBuilt();
  const worker = startServer(name, CANON_CLI, ['worker'], canonEnv({ databaseUrl, adminKey, seed: false, rateLimit, extraEnv }), pinned, nodeArgs(profileName), core);
  track?.(worker);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!/worker running/.test(worker.output())) {
    assertAlive(worker, 'before it said it was running');
    if (Date.now() > deadline) throw new Error(`${name} did not start within ${READY_TIMEOUT_MS / 1000} s:\n${worker.output()}`);
    await sleep(50);
  }
  return worker;
}

/** POSTs `count` distinct products with `width` requests in flight over kept-alive connections; returns their ids in order. */
export async function createProducts(base, headers, count, { width = 16, label = 'bench' } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: width });
  const ids = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const res = await request('POST', `${base}/v2/products`, {
        headers,
        body: { name: `${label} product ${i}`, price: { amount: 100 + (i % 100_000), currency: 'EUR' }, status: 'active', tags: [] },
        timeoutMs: 30_000,
        agent,
      });
      if (res.status !== 201) throw new Error(`POST /v2/products answered ${res.status}: ${res.body.slice(0, 300)}`);
      ids[i] = JSON.parse(res.body).id;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(width, count) }, lane));
  } finally {
    agent.destroy();
  }
  return ids;
}

/** Registers a webhook endpoint (admin key in `headers`); returns its id and whsec_ secret. */
export async function registerEndpoint(base, headers, url, events = ['*']) {
  const res = await request('POST', `${base}/v2/webhook-endpoints`, { headers, body: { url, events }, timeoutMs: 10_000 });
  if (res.status !== 201) throw new Error(`POST /v2/webhook-endpoints answered ${res.status}: ${res.body.slice(0, 300)}`);
  const json = JSON.parse(res.body);
  return { id: json.id, secret: json.secret };
}

/** A module of the build under `root` (this checkout, or a built worktree of an earlier commit). */
const dist = (file, root = ROOT) => import(pathToFileURL(path.join(root, 'dist/src', file)).href);

/**
 * Opens Canon's own store on `databaseUrl` (sqlite:… or postgres://…) with the reference model, migrated; `listCache:
 * false` as CANON_LIST_CACHE=off; `root`: whose build (default this checkout's); `max`: PostgreSQL's pool size.
 */
export async function openCanonStore(databaseUrl, { listCache = true, root = ROOT, max = 2 } = {}) {
  if (root === ROOT) assertBuilt();
  const { compileModel } = await dist('model/compile.js', root);
  const { withPlatform } = await dist('runtime/compose.js', root);
  const { commerce } = await import(pathToFileURL(path.join(root, 'dist/examples/commerce/index.js')).href);
  const model = compileModel(withPlatform(commerce));
  let store;
  if (databaseUrl.startsWith('sqlite:')) {
    const { SqliteStore } = await dist('store/sqlite/sqlite-store.js', root);
    store = new SqliteStore({ path: databaseUrl.slice('sqlite:'.length), listCache });
  } else {
    const { PgStore } = await dist('store/postgres/pg-store.js', root);
    store = new PgStore({ connectionString: databaseUrl, max, listCache });
  }
  await store.migrate(model);
  return store;
}

const STATUSES = ['active', 'draft', 'archived'];

/** Product number i: status by i % 3, prices spread over 1.00–1,000.00 EUR (ties possible), timestamps 1 s apart. */
export function productRecord(i, epochMs = Date.UTC(2026, 0, 1)) {
  const at = new Date(epochMs + i * 1000).toISOString();
  return {
    id: uuidv7(),
    version: 1,
    created_at: at,
    updated_at: at,
    name: `Bench product ${i}`,
    description: `Product number ${i}, made by the benchmark seeder.`,
    price: { amount: 100 + ((i * 7919) % 99_901), currency: 'EUR' },
    status: STATUSES[i % 3],
    tags: [],
  };
}

/** Inserts `count` products in transactions of `batch` rows (each also goes to `onRecord`); returns their ids and the time taken. */
export async function seedProducts(store, count, { batch = 10_000, onRecord } = {}) {
  const started = process.hrtime.bigint();
  const ids = [];
  for (let from = 0; from < count; from += batch) {
    const to = Math.min(count, from + batch);
    await store.transaction(async (tx) => {
      for (let i = from; i < to; i++) {
        const record = productRecord(i);
        await tx.insert('products', record);
        ids.push(record.id);
        onRecord?.(record);
      }
    });
  }
  return { ids, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** The functions with the most self time in a V8 CPU profile, as shares of the sampled time that was not idle. */
export function topSelfTime(file, top = 12) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const perNode = new Map();
  profile.samples.forEach((id, i) => perNode.set(id, (perNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const self = new Map();
  let busy = 0;
  for (const [id, us] of perNode) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    if (functionName === '(idle)') continue;
    const where = url ? `${url.replace(`${pathToFileURL(ROOT).href}/`, '').replace(/^file:\/\//, '')}:${lineNumber + 1}` : '(native)';
    const key = `${functionName || '(anonymous)'} ${where}`;
    self.set(key, (self.get(key) ?? 0) + us);
    busy += us;
  }
  return {
    file,
    busyMs: busy / 1000,
    top: [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, us]) => ({ fn, ms: us / 1000, share: us / busy })),
  };
}

/** With BENCH_CPU_PROF set: prints (and returns) the top self-time functions of Canon's profile `profileName`. */
export function reportProfile(profileName) {
  if (!settings.cpuProfileDir) return undefined;
  const file = profileFileOf(profileName);
  if (!existsSync(file)) {
    console.warn(`bench: WARNING no CPU profile at ${file} (did Canon exit cleanly?)`);
    return undefined;
  }
  const summary = topSelfTime(file);
  console.log(`bench: CPU profile ${path.relative(ROOT, file)} (${Math.round(summary.busyMs)} ms busy), top self time:`);
  for (const t of summary.top) console.log(`  ${(t.share * 100).toFixed(1).padStart(5)}%  ${t.fn}`);
  return summary;
}
