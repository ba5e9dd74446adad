// Canon as a benchmark target: its environment and start, fast seeding through the compiled store, CPU profiles.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { v7 as uuidv7 } from 'uuid';
import { CANON_CLI, ROOT, UNLIMITED_RATE, settings } from './options.mjs';
import { childEnv, startServer } from './processes.mjs';

/** Names this run's CPU profiles apart from earlier ones in the same directory. */
const RUN_STAMP = new Date().toISOString().replace(/[:.]/g, '-');
const profileFile = (name) => `${RUN_STAMP}-${name}.cpuprofile`;

/** A fixed secret so that cursors stay valid across restarts of the same data. */
const CANON_SECRET = 'bench-cursor-signing-secret-0123456789abcdef';

export function assertBuilt() {
  if (!existsSync(CANON_CLI)) throw new Error(`${path.relative(ROOT, CANON_CLI)} is missing: build first (npx tsc -p . or npm run build).`);
}

/**
 * Starts `canon serve` on 127.0.0.1:port. `rateLimit`: 'unlimited' (on, with limits no run reaches) or 'off'.
 * With BENCH_CPU_PROF set, Canon runs under `node --cpu-prof` and writes `<run time>-<profileName>.cpuprofile` there.
 */
export function startCanon(port, { databaseUrl, adminKey, pinned, seed = false, rateLimit = 'unlimited', profileName = 'canon', name = 'Canon', env: extraEnv = {} }) {
  assertBuilt();
  const env = childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
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
  if (settings.cpuProfileDir) mkdirSync(settings.cpuProfileDir, { recursive: true });
  const nodeArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`, `--cpu-prof-name=${profileFile(profileName)}`] : [];
  return startServer(name, CANON_CLI, ['serve'], env, pinned, nodeArgs);
}

const dist = (file) => import(pathToFileURL(path.join(ROOT, 'dist/src', file)).href);

/** Opens Canon's own store on `databaseUrl` (sqlite:… or postgres://…) with the reference model, migrated. */
export async function openCanonStore(databaseUrl) {
  assertBuilt();
  const { compileModel } = await dist('model/compile.js');
  const { withPlatform } = await dist('runtime/compose.js');
  const { commerce } = await import(pathToFileURL(path.join(ROOT, 'dist/examples/commerce/index.js')).href);
  const model = compileModel(withPlatform(commerce));
  let store;
  if (databaseUrl.startsWith('sqlite:')) {
    const { SqliteStore } = await dist('store/sqlite/sqlite-store.js');
    store = new SqliteStore({ path: databaseUrl.slice('sqlite:'.length) });
  } else {
    const { PgStore } = await dist('store/postgres/pg-store.js');
    store = new PgStore({ connectionString: databaseUrl, max: 2 });
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
  const file = path.join(settings.cpuProfileDir, profileFile(profileName));
  if (!existsSync(file)) {
    console.warn(`bench: WARNING no CPU profile at ${file} (did Canon exit cleanly?)`);
    return undefined;
  }
  const summary = topSelfTime(file);
  console.log(`bench: CPU profile ${path.relative(ROOT, file)} (${Math.round(summary.busyMs)} ms busy), top self time:`);
  for (const t of summary.top) console.log(`  ${(t.share * 100).toFixed(1).padStart(5)}%  ${t.fn}`);
  return summary;
}
