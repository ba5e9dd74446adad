#!/usr/bin/env node
// Benchmark (issue 17): Canon against Platformatic DB (the closest peer) on the same products, side by side in one run.
//
//   npm run bench:platformatic      (builds first)
//   node bench/platformatic.mjs     (expects a fresh build in dist/)
//
// Installs Platformatic DB at a pinned version (BENCH_PLATFORMATIC_VERSION, default 2.61.0) with npm into
// <tmpdir>/canon-bench-platformatic-<version> (once: later runs reuse it; never a dependency of this project). Then:
//   SQLite: seeds BENCH_PRODUCTS products (default 2,000) into a fresh file through Canon's own store, lets Canon serve
//   it once, and after Canon stops gives each server of every repeat its own copy of that file: Platformatic DB reads
//   Canon's products table as it is (same rows, columns and indexes; its primary key is Canon's integer rowid `rid`).
//   PostgreSQL: a fresh database canon_bench_<random> (dropped at the end), migrated and seeded through Canon's
//   PgStore, served by Canon and by Platformatic DB at once from the same products table.
// Every request is checked before it is measured (status, 20 items, the same ids in the same order on both
// servers): GET one product by id (also against the bare node:http baseline, bench/baselines/bare-http.mjs), a
// 20-item offset page at offset 500, the filtered and sorted page (status=active, price descending) and its second
// page, a sparse-fields page, and (SQLite only) POST create, also against a Canon with synchronous=NORMAL (the
// setting Platformatic's better-sqlite3 build uses in WAL mode). Servers run on core 0, the client on core 1; each
// repeat starts the servers afresh and, request by request, measures Canon and Platformatic one after the other
// (Canon first on odd repeats, Platformatic first on even ones). The client is `wrk -t1 -c64` pinned with taskset
// when wrk is on PATH (autocannon's own core saturates near Canon's GET-by-id rate), else autocannon in this process.
// GET by id against the bare server is measured a second time in alternating slices (Canon, bare, bare, Canon …; BENCH_BARE_SLICES
// per server, default 6, each half BENCH_DURATION), whose ratio is the verdict for that target: a sequential pair of runs
// compares two moments of a machine whose speed drifts by tens of percent within a minute.
// Results go to bench/results/platformatic.json.
//
// Environment: as bench/get-by-id.mjs (BENCH_DURATION, BENCH_WARMUP, BENCH_QUIET_WAIT, BENCH_CPU_PROF), plus
// BENCH_REPEATS (default 3), BENCH_PRODUCTS (default 2000), BENCH_PARTS (sqlite,pg: which parts, default both),
// BENCH_CONNECTIONS (default 64 here), BENCH_CLIENT (wrk or autocannon; default wrk when on PATH),
// BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432) and BENCH_PLATFORMATIC_VERSION (exact, default 2.61.0).
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openCanonStore, reportProfile, seedProducts, startCanon } from './lib/canon.mjs';
import { cpuSecondsBetween, cpuSecondsByName, setUpPinning } from './lib/cpu.mjs';
import { measure } from './lib/load.mjs';
import { CLIENT_CORE, CORES, CPU_MODEL, RESULTS_DIR, ROOT, fmt, intFromEnv, settings } from './lib/options.mjs';
import { createDatabase, withClient } from './lib/pg.mjs';
import { dropCountTriggers } from './lib/peers.mjs';
import { PLATFORMATIC_READY_PATH, installPlatformatic, sqliteConnectionString, startPlatformatic } from './lib/platformatic.mjs';
import { childEnv, makeTempDir, request, runMain, startServer, startServers } from './lib/processes.mjs';
import { median, packageVersion, printTable, problemsOf, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';
import { ID_SLOT, OFFSET_SLOT, interleavedWrk, measureWithWrk, wrkProblems } from './lib/wrk-lua.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'platformatic.json');
const BARE_SERVER = path.join(ROOT, 'bench/baselines/bare-http.mjs');
const ADMIN_KEY = 'ck_bench_platformatic_0123456789abcdef';
const HEADERS = { 'x-api-key': ADMIN_KEY };
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 2_000, 600, 1_000_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 15);
const CONNECTIONS = process.env.BENCH_CONNECTIONS ? settings.connections : 64;
const LIMIT = 20;
const OFFSET = 500;
const READY_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** Issue 17's targets (informational here: the script fails on invalid runs, not on missed targets). */
const TARGETS = { page: 1.5, byId: 3, byIdOverBare: 0.6, create: 1.5 };
const POSTGRES_CPU = { name: 'database', sample: () => cpuSecondsByName('postgres'), seconds: cpuSecondsBetween };

const PARTS = (() => {
  const parts = (process.env.BENCH_PARTS || 'sqlite,pg').split(',').map((p) => p.trim());
  for (const p of parts) if (!['sqlite', 'pg'].includes(p)) throw new Error(`BENCH_PARTS takes sqlite and/or pg (comma-separated), got "${p}"`);
  return [...new Set(parts)];
})();

const CLIENT = (() => {
  const wanted = process.env.BENCH_CLIENT || 'wrk';
  if (!['wrk', 'autocannon'].includes(wanted)) throw new Error(`BENCH_CLIENT takes wrk or autocannon, got "${wanted}"`);
  if (wanted === 'autocannon') return { kind: 'autocannon', version: packageVersion('autocannon') };
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (probe.error) {
    console.warn('bench: WARNING wrk is not on PATH (apt-get install -y wrk): falling back to autocannon, whose own core saturates near Canon GET-by-id rates.');
    return { kind: 'autocannon', version: packageVersion('autocannon') };
  }
  return { kind: 'wrk', version: /wrk\s+(\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1] ?? 'unknown' };
})();

// ---------------------------------------------------------------------------------------------------
// The requests. Canon's paths, query strings and bodies, and Platformatic DB's for the same data.

const CANON = {
  offset: `/v2/products?limit=${LIMIT}&offset=${OFFSET}`,
  filtered: `/v2/products?status=active&sort=-price.amount&limit=${LIMIT}`,
  sparse: `/v2/products?fields=id,name,price&limit=${LIMIT}`,
  body: { name: 'Bench create', description: 'Created by the benchmark.', price: { amount: 4900, currency: 'EUR' }, status: 'active', tags: ['coffee'] },
};
// Platformatic camel-cases column names: price_amount is priceAmount, price_currency priceCurrency.
const PLATFORMATIC = {
  offset: `/products?limit=${LIMIT}&offset=${OFFSET}`,
  filtered: `/products?where.status.eq=active&orderby.priceAmount=desc&limit=${LIMIT}`,
  // Platformatic DB 2.61's REST API has no cursor: its second page is an offset.
  filteredNext: `/products?where.status.eq=active&orderby.priceAmount=desc&limit=${LIMIT}&offset=${LIMIT}`,
  sparse: `/products?fields=id,name,priceAmount,priceCurrency&limit=${LIMIT}`,
  // On PostgreSQL Canon's products table also holds its full-text column _search (a tsvector), which Platformatic
  // would render as `search` in every full row; full-row requests there name the product's own columns instead.
  fullFields: 'id,version,createdAt,updatedAt,name,description,priceAmount,priceCurrency,status,tags',
  // The same content as Canon's body. The table's id, version (NOT NULL, no default) come from the client, as Canon
  // makes them itself; created_at and updated_at are filled by Platformatic's autoTimestamp (its default).
  body: (id) => ({ id, version: 1, name: 'Bench create', description: 'Created by the benchmark.', priceAmount: 4900, priceCurrency: 'EUR', status: 'active', tags: '["coffee"]' }),
};
// offsetCold's path holds OFFSET_SLOT (a page neither server has served lately), create's body ID_SLOT (bench/lib/wrk-lua.mjs).
const withOffsetSlot = (p) => p.replace(`offset=${OFFSET}`, `offset=${OFFSET_SLOT}`);

const KINDS = [
  { key: 'byId', title: 'GET one product by id', target: TARGETS.byId },
  { key: 'offset', title: `20 items, offset=${OFFSET}`, target: TARGETS.page },
  // Every request another offset (a cycle of all of them, longer than any page cache): what a page costs uncached.
  { key: 'offsetCold', title: '20 items, offset rotating (uncached)', target: TARGETS.page, wrkOnly: true },
  { key: 'filtered', title: '20 items, status=active, price desc', target: TARGETS.page },
  { key: 'filteredNext', title: '  the same, second page', target: TARGETS.page },
  { key: 'sparse', title: '20 items, fields=id,name,price', target: TARGETS.page },
  { key: 'create', title: 'POST create', target: TARGETS.create, sqliteOnly: true },
];

/** One request over a fresh connection: must answer `status` with JSON; returns the parsed body and its size. */
async function call(method, url, { headers = {}, body, status }) {
  const res = await request(method, url, { headers, body, timeoutMs: REQUEST_TIMEOUT_MS });
  if (res.status !== status) throw new Error(`${method} ${url} answered ${res.status}, expected ${status}: ${res.body.slice(0, 500)}`);
  return { json: JSON.parse(res.body), bytes: Buffer.byteLength(res.body), headers: res.headers };
}

function assertPage(what, items, { active = false } = {}) {
  if (!Array.isArray(items) || items.length !== LIMIT) throw new Error(`${what}: expected ${LIMIT} items, got ${Array.isArray(items) ? items.length : typeof items}`);
  if (active && items.some((p) => p.status !== 'active')) throw new Error(`${what}: an item is not active`);
  return items.map((p) => p.id);
}

function assertKeys(what, items, keys) {
  for (const item of items) {
    const got = Object.keys(item).sort().join();
    if (got !== [...keys].sort().join()) throw new Error(`${what}: an item has the keys ${got}, expected ${[...keys].sort().join()}`);
  }
}

/** A load: what the client sends, and what the check saw (status, body bytes, ids). */
function load(url, { method = 'GET', headers = {}, body, status = 200, bytes, ids }) {
  return { url, method, headers, ...(body !== undefined ? { body } : {}), status, check: { status, bodyBytes: bytes, ...(ids ? { ids } : {}) } };
}

/** Checks Canon's answers to every request and returns the loads. `create`: also POST once (SQLite). */
async function prepareCanon(base, id, { create }) {
  const loads = {};
  const one = await call('GET', `${base}/v2/products/${id}`, { headers: HEADERS, status: 200 });
  if (one.json.id !== id) throw new Error(`Canon GET by id returned ${one.json.id}, expected ${id}`);
  loads.byId = load(`${base}/v2/products/${id}`, { headers: HEADERS, bytes: one.bytes, ids: [id] });

  const offset = await call('GET', `${base}${CANON.offset}`, { headers: HEADERS, status: 200 });
  loads.offset = load(`${base}${CANON.offset}`, { headers: HEADERS, bytes: offset.bytes, ids: assertPage('Canon offset page', offset.json.data) });
  if (offset.json.pagination?.offset !== OFFSET) throw new Error(`Canon's offset page is not an offset page: ${JSON.stringify(offset.json.pagination)}`);
  loads.offsetCold = { ...load(`${base}${withOffsetSlot(CANON.offset)}`, { headers: HEADERS, bytes: offset.bytes, ids: loads.offset.check.ids }), rotate: PRODUCTS - LIMIT };

  const filtered = await call('GET', `${base}${CANON.filtered}`, { headers: HEADERS, status: 200 });
  loads.filtered = load(`${base}${CANON.filtered}`, { headers: HEADERS, bytes: filtered.bytes, ids: assertPage('Canon filtered page', filtered.json.data, { active: true }) });
  const cursor = filtered.json.pagination?.next_cursor;
  if (typeof cursor !== 'string') throw new Error(`Canon's filtered page has no next_cursor: ${JSON.stringify(filtered.json.pagination)}`);
  const nextPath = `${CANON.filtered}&cursor=${encodeURIComponent(cursor)}`;
  const next = await call('GET', `${base}${nextPath}`, { headers: HEADERS, status: 200 });
  loads.filteredNext = load(`${base}${nextPath}`, { headers: HEADERS, bytes: next.bytes, ids: assertPage('Canon filtered second page', next.json.data, { active: true }) });

  const sparse = await call('GET', `${base}${CANON.sparse}`, { headers: HEADERS, status: 200 });
  const sparseIds = assertPage('Canon sparse page', sparse.json.data);
  assertKeys('Canon sparse page', sparse.json.data, ['id', 'name', 'price', 'links']);
  loads.sparse = load(`${base}${CANON.sparse}`, { headers: HEADERS, bytes: sparse.bytes, ids: sparseIds });

  if (create) loads.create = await prepareCanonCreate(base);
  return loads;
}

async function prepareCanonCreate(base) {
  const body = JSON.stringify(CANON.body);
  const created = await call('POST', `${base}/v2/products`, { headers: HEADERS, body, status: 201 });
  if (created.json.name !== CANON.body.name || typeof created.json.id !== 'string') throw new Error(`Canon POST returned ${JSON.stringify(created.json).slice(0, 300)}`);
  return load(`${base}/v2/products`, { method: 'POST', headers: { ...HEADERS, 'content-type': 'application/json' }, body, status: 201, bytes: created.bytes });
}

function sameIds(what, got, reference) {
  if (got.join() !== reference.join())
    throw new Error(`${what}: Platformatic DB listed other products than Canon (${got.slice(0, 3).join(', ')}… vs ${reference.slice(0, 3).join(', ')}…)`);
  return got;
}

/** Checks Platformatic's answers against Canon's (the same products in the same order) and returns the loads. */
async function preparePlatformatic(base, id, reference, { part, create }) {
  const full = part === 'pg' ? PLATFORMATIC.fullFields : undefined;
  const withFull = (p) => (full ? `${p}${p.includes('?') ? '&' : '?'}fields=${full}` : p);
  const fullKeys = full ? full.split(',') : undefined;
  const loads = {};
  // The primary key Platformatic routes on: on SQLite Canon's integer rowid `rid` (id is a UNIQUE TEXT column), on
  // PostgreSQL id (uuid PRIMARY KEY).
  const found = await call('GET', `${base}/products?where.id.eq=${id}&limit=1`, { status: 200 });
  if (found.json.length !== 1) throw new Error(`Platformatic DB does not find product ${id}`);
  const key = part === 'sqlite' ? found.json[0].rid : found.json[0].id;
  const byIdPath = withFull(`/products/${encodeURIComponent(key)}`);
  const one = await call('GET', `${base}${byIdPath}`, { status: 200 });
  if (one.json.id !== id) throw new Error(`Platformatic GET ${byIdPath} returned ${one.json.id}, expected ${id}`);
  if (fullKeys) assertKeys('Platformatic by id', [one.json], fullKeys);
  loads.byId = load(`${base}${byIdPath}`, { bytes: one.bytes, ids: [id] });

  for (const kind of ['offset', 'filtered', 'filteredNext']) {
    const p = withFull(PLATFORMATIC[kind]);
    const page = await call('GET', `${base}${p}`, { status: 200 });
    const ids = sameIds(`${kind} page`, assertPage(`Platformatic ${kind} page`, page.json, { active: kind !== 'offset' }), reference[kind].check.ids);
    if (fullKeys) assertKeys(`Platformatic ${kind} page`, page.json, fullKeys);
    loads[kind] = load(`${base}${p}`, { bytes: page.bytes, ids });
  }
  loads.offsetCold = {
    ...load(`${base}${withOffsetSlot(withFull(PLATFORMATIC.offset))}`, { bytes: loads.offset.check.bodyBytes, ids: loads.offset.check.ids }),
    rotate: PRODUCTS - LIMIT,
  };
  const sparse = await call('GET', `${base}${PLATFORMATIC.sparse}`, { status: 200 });
  const sparseIds = sameIds('sparse page', assertPage('Platformatic sparse page', sparse.json), reference.sparse.check.ids);
  assertKeys('Platformatic sparse page', sparse.json, ['id', 'name', 'priceAmount', 'priceCurrency']);
  loads.sparse = load(`${base}${PLATFORMATIC.sparse}`, { bytes: sparse.bytes, ids: sparseIds });

  if (create) {
    const newId = randomUUID();
    const created = await call('POST', `${base}/products`, { body: PLATFORMATIC.body(newId), status: 200 });
    if (created.json.id !== newId || typeof created.json.createdAt !== 'string') throw new Error(`Platformatic POST returned ${JSON.stringify(created.json).slice(0, 300)}`);
    // Platformatic DB answers a create with 200 (and a Location header). Each request gets a fresh id (see uniqueBody).
    loads.create = load(`${base}/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(PLATFORMATIC.body(ID_SLOT)),
      status: 200,
      bytes: created.bytes,
    });
    loads.create.uniqueId = true;
  }
  return loads;
}

async function prepareBare(base) {
  const one = await call('GET', `${base}/v2/products/baseline`, { status: 200 });
  return load(`${base}/v2/products/baseline`, { bytes: one.bytes, ids: [one.json.id] });
}

// ---------------------------------------------------------------------------------------------------
// The client: wrk pinned to the client core (bench/lib/wrk-lua.mjs: a Lua script sets method, headers and body,
// gives each POST to Platformatic a fresh id, and prints the summary as JSON), or autocannon in this process.

const WRK_OPTIONS = { connections: CONNECTIONS, timeoutSeconds: REQUEST_TIMEOUT_MS / 1000 };

function measureOne(server, l, opts) {
  if (CLIENT.kind === 'wrk') return measureWithWrk(server, l, { ...opts, ...WRK_OPTIONS });
  const autocannonLoad = { url: l.url, headers: l.headers, connections: CONNECTIONS, method: l.method, ...(l.body !== undefined ? { body: l.body } : {}) };
  if (l.uniqueId) {
    const [before, after] = l.body.split(ID_SLOT);
    autocannonLoad.requests = [{ method: 'POST', setupRequest: (req) => ({ ...req, body: `${before}${randomUUID()}${after}` }) }];
  }
  return measure(server, autocannonLoad, { label: opts.label, extraCpu: opts.extraCpu }).then((r) => ({ ...r, method: l.method, expectedStatus: l.status }));
}

function problemsOfRun(r) {
  return CLIENT.kind === 'autocannon' ? problemsOf(r, r.expectedStatus) : wrkProblems(r);
}

// ---------------------------------------------------------------------------------------------------
// Servers: started one by one (each on a free port, each waited for), all on the server core, stopped together.

const withServers = (specs, fn) => startServers(specs, fn, READY_TIMEOUT_MS);

const SERVER_LABELS = { canon: 'Canon', platformatic: 'Platformatic DB', bare: 'bare node:http', canonNormal: 'Canon synchronous=NORMAL' };

/** Who is measured for `kind`, in which order: Canon and Platformatic swap on even repeats; the extras go last (or first). */
function orderFor(kind, repeat, part) {
  const pair = repeat % 2 === 1 ? ['canon', 'platformatic'] : ['platformatic', 'canon'];
  const extra = kind === 'byId' && part === 'sqlite' ? ['bare'] : kind === 'create' ? ['canonNormal'] : [];
  return repeat % 2 === 1 ? [...pair, ...extra] : [...extra, ...pair];
}

/** One repeat: the given servers are running; check every request on each, then measure kind by kind. */
async function runRepeat({ part, repeat, handles, kinds, id, pinned, dir }) {
  const loads = {};
  loads.canon = await prepareCanon(handles.canon.base, id, { create: kinds.some((k) => k.key === 'create') });
  loads.platformatic = await preparePlatformatic(handles.platformatic.base, id, loads.canon, { part, create: kinds.some((k) => k.key === 'create') });
  if (handles.bare) loads.bare = { byId: await prepareBare(handles.bare.base) };
  if (handles.canonNormal) loads.canonNormal = { create: await prepareCanonCreate(handles.canonNormal.base) };
  const extraCpu = part === 'pg' ? POSTGRES_CPU : undefined;
  const results = {};
  for (const kind of kinds) {
    results[kind.key] = {};
    for (const who of orderFor(kind.key, repeat, part)) {
      const l = loads[who][kind.key];
      const label = `${part} r${repeat}: ${SERVER_LABELS[who]} ${kind.key}`;
      const idle = Object.entries(handles)
        .filter(([key]) => key !== who)
        .map(([, h]) => h.server);
      const r = await measureOne(handles[who].server, l, { label, pinned, dir, extraCpu, idle });
      results[kind.key][who] = { ...r, check: l.check };
    }
  }
  if (loads.bare && BARE_SLICES > 0 && CLIENT.kind === 'wrk') results.interleaved = await interleavedOverBare(handles, loads, { part, repeat, pinned, dir });
  return results;
}

/** Slices per server of the interleaved GET-by-id comparison (BENCH_BARE_SLICES), each half the measured duration. */
const BARE_SLICES = intFromEnv('BENCH_BARE_SLICES', 6, 0, 50);

/**
 * GET by id on Canon and on the bare node:http server in alternating slices (A B B A A B …), requests and time summed
 * per server: the sequential runs above compare two 5-second windows, and on this shared machine one server's rate
 * moved by half between windows a minute apart (docs/BENCHMARKS.md), more than the 0.6× target can be told from.
 * Every slice must be free of errors and non-2xx answers.
 */
async function interleavedOverBare(handles, loads, { part, repeat, pinned, dir }) {
  const r = await interleavedWrk(
    [
      { key: 'canon', server: handles.canon.server, load: loads.canon.byId },
      { key: 'bare', server: handles.bare.server, load: loads.bare.byId },
    ],
    { slices: BARE_SLICES, seconds: Math.max(1, Math.round(settings.duration / 2)), label: `${part} r${repeat}: GET by id`, pinned, dir, ...WRK_OPTIONS },
  );
  return { canon: r.canon.requestsPerSecond, bare: r.bare.requestsPerSecond, slices: { canon: r.canon.slices, bare: r.bare.slices }, ratio: r.ratio };
}

function ratiosOf(results) {
  const ratios = {};
  if (results.interleaved) ratios.byIdOverBareInterleaved = results.interleaved.ratio;
  for (const [kind, r] of Object.entries(results)) {
    if (kind === 'interleaved') continue;
    ratios[kind] = r.canon.requestsPerSecond.average / r.platformatic.requestsPerSecond.average;
    if (r.bare) ratios.byIdOverBare = r.canon.requestsPerSecond.average / r.bare.requestsPerSecond.average;
    if (r.canonNormal) ratios.createNormal = r.canonNormal.requestsPerSecond.average / r.platformatic.requestsPerSecond.average;
  }
  return ratios;
}

// ---------------------------------------------------------------------------------------------------
// The parts.

/** The products table as SQLite describes it (columns, indexes), and its journal mode; also checkpoints the WAL. */
function describeSqlite(file) {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    return {
      journalMode: db.pragma('journal_mode', { simple: true }),
      rows: db.prepare('SELECT count(*) FROM products').pluck().get(),
      table: db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'products'").pluck().get(),
      indexes: db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'products' ORDER BY name").all(),
    };
  } finally {
    db.close();
  }
}

async function sqlitePart({ pinning, install }) {
  const dir = makeTempDir('canon-bench-platformatic-');
  const seeded = path.join(dir, 'seeded.db');
  const store = await openCanonStore(`sqlite:${seeded}`);
  const seeding = await seedProducts(store, PRODUCTS, { batch: 10_000 });
  await store.close();
  const id = seeding.ids[Math.floor(PRODUCTS / 2)];
  console.log(`bench: sqlite: seeded ${fmt(PRODUCTS)} products through Canon's store in ${seeding.seconds.toFixed(2)} s`);
  // Canon serves the file once (its checks pass), then stops: the copies every server reads are taken after that.
  await withServers(
    [{ key: 'canon', start: (port) => startCanon(port, { databaseUrl: `sqlite:${seeded}`, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: 'canon-sqlite-seed' }) }],
    (h) => prepareCanon(h.canon.base, id, { create: false }),
  );
  const schema = describeSqlite(seeded);
  if (schema.journalMode !== 'wal') throw new Error(`the seeded file is in journal mode ${schema.journalMode}, expected wal`);

  const kinds = KINDS.filter((k) => !k.wrkOnly || CLIENT.kind === 'wrk');
  const repeats = [];
  let platformaticConfig;
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    const file = (who) => {
      const f = path.join(dir, `r${repeat}-${who}.db`);
      copyFileSync(seeded, f);
      return f;
    };
    const canonName = `canon-sqlite-r${repeat}`;
    // Seeded through Canon's store, the file carries Canon's counting triggers: Platformatic's writes must not pay for them.
    const platformaticFile = file('platformatic');
    await dropCountTriggers({ canon: `sqlite:${platformaticFile}` });
    const specs = [
      { key: 'canon', start: (port) => startCanon(port, { databaseUrl: `sqlite:${file('canon')}`, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: canonName }) },
      {
        key: 'platformatic',
        readyPath: PLATFORMATIC_READY_PATH,
        start: (port) => startPlatformatic(port, { install, connectionString: sqliteConnectionString(platformaticFile), pinned: pinning.pinned }),
      },
      {
        key: 'canonNormal',
        start: (port) =>
          startCanon(port, {
            databaseUrl: `sqlite:${file('canon-normal')}`,
            adminKey: ADMIN_KEY,
            pinned: pinning.pinned,
            profileName: `${canonName}-normal`,
            name: 'Canon (synchronous=NORMAL)',
            env: { CANON_SQLITE_SYNCHRONOUS: 'normal' },
          }),
      },
      { key: 'bare', start: (port) => startServer('bare-http', BARE_SERVER, [], childEnv({ PORT: String(port), HOST: '127.0.0.1' }), pinning.pinned) },
    ];
    const results = await withServers(specs, (handles) => {
      platformaticConfig = handles.platformatic.config;
      return runRepeat({ part: 'sqlite', repeat, handles, kinds, id, pinned: pinning.pinned, dir });
    });
    const profile = reportProfile(canonName);
    repeats.push({ repeat, results, ratios: ratiosOf(results), ...(profile ? { profile } : {}) });
  }
  return { part: 'sqlite', products: PRODUCTS, seedSeconds: seeding.seconds, productId: id, schema, platformaticConfig: redactPath(platformaticConfig, dir), repeats };
}

async function pgPart({ pinning, install }) {
  const db = await createDatabase();
  const store = await openCanonStore(db.url);
  const seeding = await seedProducts(store, PRODUCTS, { batch: 10_000 });
  await store.close();
  await withClient(db.name, (c) => c.query('VACUUM ANALYZE'));
  const id = seeding.ids[Math.floor(PRODUCTS / 2)];
  console.log(`bench: pg: seeded ${fmt(PRODUCTS)} products through Canon's PgStore in ${seeding.seconds.toFixed(2)} s, then VACUUM ANALYZE`);
  const schema = await withClient(db.name, async (c) => ({
    columns: (await c.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'products' ORDER BY ordinal_position")).rows,
    indexes: (await c.query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'products' ORDER BY indexname")).rows,
  }));
  const dir = makeTempDir('canon-bench-platformatic-pg-');
  const kinds = KINDS.filter((k) => !k.sqliteOnly && (!k.wrkOnly || CLIENT.kind === 'wrk'));
  const repeats = [];
  let platformaticConfig;
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    const canonName = `canon-pg-r${repeat}`;
    const specs = [
      { key: 'canon', start: (port) => startCanon(port, { databaseUrl: db.url, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: canonName }) },
      { key: 'platformatic', readyPath: PLATFORMATIC_READY_PATH, start: (port) => startPlatformatic(port, { install, connectionString: db.url, pinned: pinning.pinned }) },
    ];
    const results = await withServers(specs, (handles) => {
      platformaticConfig = handles.platformatic.config;
      return runRepeat({ part: 'pg', repeat, handles, kinds, id, pinned: pinning.pinned, dir });
    });
    const profile = reportProfile(canonName);
    repeats.push({ repeat, results, ratios: ratiosOf(results), ...(profile ? { profile } : {}) });
  }
  return { part: 'pg', products: PRODUCTS, seedSeconds: seeding.seconds, productId: id, postgresVersion: db.version, schema, platformaticConfig, repeats };
}

/** The configuration as written, with the run's temp dir shortened (it differs every repeat). */
function redactPath(config, dir) {
  return config ? JSON.parse(JSON.stringify(config).replaceAll(dir, '<tmp>')) : config;
}

// ---------------------------------------------------------------------------------------------------
// Reporting.

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/** Medians over the repeats of each ratio, and the figures behind them. */
function summarise(part) {
  const kinds = Object.keys(part.repeats[0].results).filter((k) => k !== 'interleaved');
  const medians = {};
  for (const key of Object.keys(part.repeats[0].ratios)) medians[key] = median(part.repeats.map((r) => r.ratios[key]));
  const cpu = (kind, who) => median(part.repeats.map((r) => r.results[kind][who]?.serverCpuMicrosPerRequest).filter((x) => typeof x === 'number'));
  const rows = kinds.map((kind) => {
    const k = KINDS.find((x) => x.key === kind);
    const rps = (who) => part.repeats.map((r) => fmt(r.results[kind][who].requestsPerSecond.average)).join(' / ');
    return [
      k.title,
      rps('canon'),
      rps('platformatic'),
      part.repeats.map((r) => `${fmt(r.ratios[kind], 2)}x`).join(' / '),
      `${fmt(medians[kind], 2)}x`,
      `>= ${k.target}x`,
      fmt(cpu(kind, 'canon'), 1),
      fmt(cpu(kind, 'platformatic'), 1),
    ];
  });
  console.log(`\n${part.part === 'sqlite' ? 'SQLite' : `PostgreSQL ${part.postgresVersion}`}: ${fmt(part.products)} products, ${part.repeats.length} repeat(s); req/s per repeat`);
  table(['request', 'Canon req/s', 'Platformatic req/s', 'Canon/Platformatic', 'median', 'issue 17', 'Canon CPU µs/req', 'Platformatic CPU µs/req'], rows);
  const extra = [];
  if (medians.byIdOverBare !== undefined) {
    extra.push([
      'GET by id: Canon / bare node:http',
      part.repeats.map((r) => fmt(r.results.byId.bare.requestsPerSecond.average)).join(' / '),
      part.repeats.map((r) => `${fmt(r.ratios.byIdOverBare, 2)}x`).join(' / '),
      `${fmt(medians.byIdOverBare, 2)}x`,
      `>= ${TARGETS.byIdOverBare}x`,
      fmt(cpu('byId', 'bare'), 1),
    ]);
  }
  if (medians.byIdOverBareInterleaved !== undefined) {
    extra.push([
      'the same, interleaved slices (the verdict)',
      part.repeats.map((r) => fmt(r.results.interleaved.bare)).join(' / '),
      part.repeats.map((r) => `${fmt(r.ratios.byIdOverBareInterleaved, 2)}x`).join(' / '),
      `${fmt(medians.byIdOverBareInterleaved, 2)}x`,
      `>= ${TARGETS.byIdOverBare}x`,
      '',
    ]);
  }
  if (medians.createNormal !== undefined) {
    extra.push([
      'POST: Canon synchronous=NORMAL / Platformatic',
      part.repeats.map((r) => fmt(r.results.create.canonNormal.requestsPerSecond.average)).join(' / '),
      part.repeats.map((r) => `${fmt(r.ratios.createNormal, 2)}x`).join(' / '),
      `${fmt(medians.createNormal, 2)}x`,
      `>= ${TARGETS.create}x`,
      fmt(cpu('create', 'canonNormal'), 1),
    ]);
  }
  if (extra.length > 0) {
    console.log('');
    table(['comparison', 'other server req/s', 'ratio per repeat', 'median', 'issue 17', 'other server CPU µs/req'], extra);
  }
  const bytes = kinds.map((kind) => `${kind} ${part.repeats[0].results[kind].canon.check.bodyBytes} / ${part.repeats[0].results[kind].platformatic.check.bodyBytes}`);
  console.log(`response bytes, Canon / Platformatic: ${bytes.join(', ')}`);
  return medians;
}

async function main() {
  const pinning = setUpPinning();
  const install = await installPlatformatic();
  console.log(
    `bench: Canon vs Platformatic DB ${install.versions['@platformatic/db']} (${PARTS.join(', ')}; ${REPEATS} repeats) | node ${process.version} | ${CORES} cores (${CPU_MODEL}) | ` +
      (pinning.pinned ? `servers on core ${pinning.serverCore}, client on core ${pinning.clientCore ?? 'unpinned'}` : 'UNPINNED') +
      ` | ${CLIENT.kind} ${CLIENT.version}, ${CONNECTIONS} connections | warm-up ${settings.warmup} s, measured ${settings.duration} s`,
  );
  const parts = {};
  for (const part of PARTS) parts[part] = part === 'sqlite' ? await sqlitePart({ pinning, install }) : await pgPart({ pinning, install });

  const source = sourceVersion();
  const rows = Object.values(parts).flatMap((p) =>
    p.repeats.flatMap((r) =>
      Object.entries(r.results)
        .filter(([kind]) => kind !== 'interleaved')
        .flatMap(([, byWho]) => Object.values(byWho)),
    ),
  );
  const problems = [...rows.flatMap(problemsOfRun), ...sourceProblems(source)];
  console.log('');
  printTable(rows, { extraCpu: PARTS.includes('pg') ? 'database' : undefined });
  const medians = {};
  for (const [name, part] of Object.entries(parts)) medians[name] = summarise(part);
  console.log(
    `\n${CLIENT.kind === 'wrk' ? `client: wrk ${CLIENT.version} -t1 -c${CONNECTIONS}` : `client: autocannon ${CLIENT.version}, ${CONNECTIONS} connections`}` +
      `${pinning.pinned ? ` on core ${CLIENT_CORE}` : ''}; the "client CPU" column is ${CLIENT.kind === 'wrk' ? "wrk's share of a core (with this process's)" : "this process's share (autocannon)"}.`,
  );
  console.log(
    `Platformatic DB's better-sqlite3 ${install.versions['better-sqlite3']} runs WAL files at synchronous=${install.sqliteWalSynchronous}; Canon at FULL unless CANON_SQLITE_SYNCHRONOUS=normal.`,
  );
  warnAboutCpu(rows);
  for (const r of rows) {
    if (r.idleServersCpu > 0.05) console.warn(`bench: note ${r.label}: the other servers waiting on the server core used ${fmt(r.idleServersCpu * 100)}% of it meanwhile.`);
  }

  writeResults(RESULTS_FILE, {
    ...resultsHeader(
      'platformatic',
      source,
      pinning,
      {
        client:
          CLIENT.kind === 'wrk'
            ? `wrk ${CLIENT.version} -t1 -c${CONNECTIONS} --timeout ${REQUEST_TIMEOUT_MS / 1000}s, ${pinning.pinned ? `taskset -c ${CLIENT_CORE}` : 'unpinned'}`
            : `autocannon ${CLIENT.version} (programmatic), in the benchmark process`,
        connections: CONNECTIONS,
        repeats: REPEATS,
        parts: PARTS,
        order:
          'per repeat: fresh servers (SQLite: fresh copies of the seeded file), all idle on the server core; request by request, Canon then Platformatic (reversed on even repeats); bare and Canon NORMAL after them (before on even repeats)',
        canonRateLimit: 'on, limits 1000000000/1',
        platformatic: {
          versions: install.versions,
          installDir: install.dir,
          sqliteWalSynchronous: install.sqliteWalSynchronous,
          command: 'node <installDir>/node_modules/@platformatic/db/db.mjs start -c platformatic.json',
        },
        targets: TARGETS,
      },
      { clientTool: CLIENT },
    ),
    parts,
    medians,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
