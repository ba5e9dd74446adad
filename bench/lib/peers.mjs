// Canon and Platformatic DB on equal data: seeding one SQLite file or PostgreSQL database through Canon's store, the servers of a repeat (started together, stopped together), and checked requests.
import { Buffer } from 'node:buffer';
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openCanonStore, seedProducts, startCanon } from './canon.mjs';
import { cpuSecondsByName } from './cpu.mjs';
import { fmt } from './options.mjs';
import { createDatabase, withClient } from './pg.mjs';
import { PLATFORMATIC_READY_PATH, sqliteConnectionString, startPlatformatic } from './platformatic.mjs';
import { freePort, hasExited, makeTempDir, request, stopServer, waitUntilReady } from './processes.mjs';

export const ADMIN_KEY = 'ck_bench_peers_0123456789abcdef0123';
export const CANON_HEADERS = { 'x-api-key': ADMIN_KEY };
const READY_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** The PostgreSQL backends' CPU (measureScript's `extraCpu`): both servers' queries run there. */
export const POSTGRES_CPU = { sample: () => cpuSecondsByName('postgres') };
/**
 * On PostgreSQL Canon's products table also holds its full-text column _search (a tsvector), which Platformatic
 * would render in every full row: full-row requests there name the product's own columns (bench/platformatic.mjs).
 */
export const PLATFORMATIC_FULL_FIELDS = 'id,version,createdAt,updatedAt,name,description,priceAmount,priceCurrency,status,tags';

/** One request over a fresh connection that must answer `status`; returns the parsed JSON body, its size and the headers. */
export async function call(method, url, { headers = {}, body, status }) {
  const res = await request(method, url, { headers, body, timeoutMs: REQUEST_TIMEOUT_MS });
  if (res.status !== status) throw new Error(`${method} ${url} answered ${res.status}, expected ${status}: ${res.body.slice(0, 500)}`);
  return { json: res.body === '' ? undefined : JSON.parse(res.body), bytes: Buffer.byteLength(res.body), headers: res.headers };
}

/**
 * A SQLite file of `products` products seeded through Canon's store and served by Canon once (its start-up
 * writes), checkpointed: each server of each repeat then gets its own copy (copyOf). Platformatic DB reads
 * Canon's products table as it is; its primary key there is the integer rowid `rid` (keysOf maps ids to it).
 */
export async function seedSqlite(products, { pinned, dirPrefix }) {
  const dir = makeTempDir(dirPrefix);
  const file = path.join(dir, 'seeded.db');
  const store = await openCanonStore(`sqlite:${file}`);
  const seeding = await seedProducts(store, products, { batch: 10_000 });
  await store.close();
  console.log(`bench: sqlite: seeded ${fmt(products)} products through Canon's store in ${seeding.seconds.toFixed(2)} s`);
  await withServers(
    [{ key: 'canon', start: (port) => startCanon(port, { databaseUrl: `sqlite:${file}`, adminKey: ADMIN_KEY, pinned, profileName: 'canon-seed' }) }],
    async () => {},
  );
  const db = new Database(file);
  let rids;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const mode = db.pragma('journal_mode', { simple: true });
    if (mode !== 'wal') throw new Error(`the seeded file is in journal mode ${mode}, expected wal`);
    rids = new Map(db.prepare('SELECT id, rid FROM products').raw().all());
  } finally {
    db.close();
  }
  let copies = 0;
  return {
    store: 'sqlite',
    dir,
    ids: seeding.ids,
    seedSeconds: seeding.seconds,
    /** A fresh copy of the seeded file, as Canon's and Platformatic's database URLs. */
    copy() {
      const f = path.join(dir, `copy-${++copies}.db`);
      copyFileSync(file, f);
      return { canon: `sqlite:${f}`, platformatic: sqliteConnectionString(f) };
    },
    /** The key Platformatic routes a product on. */
    platformaticKey: (id) => {
      const rid = rids.get(id);
      if (rid === undefined) throw new Error(`product ${id} is not in the seeded file`);
      return String(rid);
    },
  };
}

/** A PostgreSQL database of `products` products seeded through Canon's PgStore, then VACUUM ANALYZE; `copy()` clones it (CREATE DATABASE … TEMPLATE). */
export async function seedPg(products) {
  const db = await createDatabase();
  const store = await openCanonStore(db.url);
  const seeding = await seedProducts(store, products, { batch: 10_000 });
  await store.close();
  await withClient(db.name, (c) => c.query('VACUUM ANALYZE'));
  console.log(`bench: pg: seeded ${fmt(products)} products through Canon's PgStore in ${seeding.seconds.toFixed(2)} s, then VACUUM ANALYZE`);
  return {
    store: 'pg',
    db,
    ids: seeding.ids,
    seedSeconds: seeding.seconds,
    postgresVersion: db.version,
    /** The seeded database itself for both servers (reads only), or with `fresh` a copy (writes). */
    async copy({ fresh = false } = {}) {
      const target = fresh ? await createDatabase({ template: db.name }) : db;
      return { canon: target.url, platformatic: target.url, name: target.name };
    },
    platformaticKey: (id) => id,
  };
}

/**
 * Canon's event-loop overload guard off (CANON_MAX_EVENT_LOOP_DELAY_MS=0, as in the tests): on this shared
 * machine other work stalls the server for over its 1 s limit, and Canon then answers 503 for the next 10 s
 * (a whole run of 312 requests in one trial) while Platformatic DB, which has no such guard, carries on.
 */
const OVERLOAD_OFF = { CANON_MAX_EVENT_LOOP_DELAY_MS: '0' };

/** Server specs for one repeat: Canon, Platformatic DB and any `extraCanons` ({ key, name, env?, nodeArgs?, cli? }: cli, another build's), on the given database URLs per key. */
export function peerSpecs({ urls, pinned, install, profileNames = {}, extraCanons = [] }) {
  const canon = (key, { env = {}, ...opts } = {}) => ({
    key,
    start: (port) => startCanon(port, { databaseUrl: urls[key], adminKey: ADMIN_KEY, pinned, profileName: profileNames[key] ?? key, env: { ...OVERLOAD_OFF, ...env }, ...opts }),
  });
  return [
    canon('canon'),
    { key: 'platformatic', readyPath: PLATFORMATIC_READY_PATH, start: (port) => startPlatformatic(port, { install, connectionString: urls.platformatic, pinned }) },
    ...extraCanons.map((c) => canon(c.key, { name: c.name, env: c.env ?? {}, nodeArgs: c.nodeArgs ?? [], ...(c.cli ? { cli: c.cli } : {}) })),
  ];
}

/** Starts the servers one by one (each on a free port, each waited for), runs fn(handles), and stops them all. */
export async function withServers(specs, fn) {
  const running = [];
  const handles = {};
  try {
    for (const spec of specs) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const server = spec.start(port);
      running.push(server);
      await waitUntilReady(server, base, spec.readyPath ?? '/healthz', READY_TIMEOUT_MS);
      handles[spec.key] = { server, base };
    }
    return await fn(handles);
  } catch (err) {
    // A refused connection says little: name the servers that are gone, and what they said last.
    const gone = running.filter(hasExited).map((s) => `${s.name} exited (code ${s.child.exitCode}, signal ${s.child.signalCode}); its output:\n${s.output().slice(-1500)}`);
    if (gone.length > 0 && err instanceof Error) err.message += `\n${gone.join('\n')}`;
    throw err;
  } finally {
    for (const server of running.reverse()) await stopServer(server);
  }
}

/** Writes one value per line (an id pool the wrk script reads), returns the file. */
export function writePool(dir, name, values) {
  const file = path.join(dir, `${name}.pool`);
  writeFileSync(file, `${values.join('\n')}\n`);
  return file;
}

/** Who goes first in repeat `repeat` (1-based): the order of `keys` turns by one each repeat, so none always leads. */
export function rotation(keys, repeat) {
  const k = (repeat - 1) % keys.length;
  return [...keys.slice(k), ...keys.slice(0, k)];
}

/**
 * Removes Canon's counting triggers (src/store/postgres/row-counts.ts, src/store/sqlite/row-counts.ts) from a copy
 * of the data another server writes (`data.copy()`'s result): Platformatic DB, or a build of Canon from before them,
 * must not pay for counts only Canon reads.
 */
export async function dropCountTriggers(copy) {
  if (copy.name !== undefined) {
    await withClient(copy.name, (c) =>
      c.query(
        "DO $$DECLARE t record; BEGIN FOR t IN SELECT tgname, tgrelid::regclass::text AS rel FROM pg_trigger WHERE tgname LIKE 'canon\\_count\\_%' LOOP " +
          "EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.rel); END LOOP; END$$",
      ),
    );
    return;
  }
  const db = new Database(copy.canon.slice('sqlite:'.length));
  try {
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'canon\\_count\\_%' ESCAPE '\\'").all()) {
      db.exec(`DROP TRIGGER "${name.replace(/"/g, '""')}"`);
    }
  } finally {
    db.close();
  }
}
