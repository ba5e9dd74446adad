#!/usr/bin/env node
// Benchmark (issue 29, Performance): Canon's batched GraphQL query against Platformatic DB's generated GraphQL on the same orders, side by side in one run.
//
//   npm run bench:graphql-platformatic      (builds first)
//   node bench/graphql-platformatic.mjs     (expects a fresh build in dist/)
//
// Data: BENCH_USERS users (default 200), BENCH_PRODUCTS products (500), BENCH_ORDERS orders (2,000) with 1–4 items
// each (bench/lib/commerce-data.mjs), the same rows on both sides:
//   Canon gets them through its own store (SqliteStore / PgStore, reference model) and serves them as it always does.
//   Platformatic DB gets its OWN database with the same rows in a plain schema (users, products, orders with user_id,
//   order_items with order_id and product_id, each a FOREIGN KEY with an index): Canon's tables declare no foreign
//   keys (their key is an integer rowid, references are checked by the services; src/store/sqlite/ddl.ts), and
//   Platformatic generates GraphQL relations only from foreign keys. SQLite: a second file; PostgreSQL: a second
//   database on the same server.
// Platformatic DB (installed as bench/lib/platformatic.mjs does) runs with its default GraphQL settings: Mercurius
// with no `jit` option, so graphql-jit is OFF there (Mercurius' minJit 0), its query parse cache and per-request
// loaders on. Canon runs graphql-jit (compiled per query text and operation name) with dataloader batching.
// The query (issue 29 point 4): 20 orders sorted by id with status, user email, and every item's quantity and
// product name and price. Canon: `orders(first: 20, sort: "id") { edges { node { … items { … product { … } } } } }`;
// Platformatic: `orders(limit: 20, orderBy: [{ field: id, direction: ASC }]) { … orderItems { … product { … } } }`,
// its field names found by introspection at start. Two kinds:
//   fixed  — the first 20 orders, the same request every time;
//   random — each request another window of 20 orders, chosen at random by the wrk Lua script from every window
//            (Canon: `after:` the cursor of the order before the window, collected at start; Platformatic: `offset:`),
//            with the same seed for both servers, so both answer the same windows in the same order and neither
//            answers from a cache of its last answer.
// Before measuring, both answers are compared order by order: the same ids in the same order, statuses, user emails,
// and per order the same items (quantity, product name, price); the random kind is checked on its first, middle and
// last windows. During every run wrk counts answers holding GraphQL `errors` (a 200): any makes the run invalid.
// Measurement, per repeat (fresh servers; SQLite: fresh copies of both files): per kind, Canon and Platformatic one
// after the other with wrk -t1 -c64 on the client core (order swapped on even repeats: req/s, p50/p99, server CPU µs
// per request), then both in alternating slices (BENCH_GQL_SLICES per server, each half BENCH_DURATION), whose ratio
// is the verdict. Reported: medians over the repeats, and the load average of the machine at start and end of each part.
// Results go to bench/results/graphql-platformatic.json.
//
// Environment: BENCH_DURATION, BENCH_WARMUP, BENCH_QUIET_WAIT, BENCH_CPU_PROF (as every script), BENCH_REPEATS
// (default 3), BENCH_PARTS (sqlite,pg; default both), BENCH_CONNECTIONS (default 64 here), BENCH_GQL_SLICES
// (default 4), BENCH_USERS, BENCH_PRODUCTS, BENCH_ORDERS, BENCH_PG_URL, BENCH_PLATFORMATIC_VERSION. CANON_* variables
// reach Canon (recorded in the results): on a machine so loaded that the servers' core stalls for whole samples, Canon's
// overload protection (DESIGN §11) answers 503 and the run is invalid; CANON_MAX_EVENT_LOOP_DELAY_MS=0 turns it off.
import { Buffer } from 'node:buffer';
import { copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openCanonStore, reportProfile, startCanon } from './lib/canon.mjs';
import { commerceRows, seedCanonCommerce, writePlainPg, writePlainSqlite } from './lib/commerce-data.mjs';
import { cpuSecondsBetween, cpuSecondsByName, setUpPinning } from './lib/cpu.mjs';
import { CLIENT_CORE, CORES, CPU_MODEL, RESULTS_DIR, fmt, intFromEnv, settings } from './lib/options.mjs';
import { createDatabase, withClient } from './lib/pg.mjs';
import { PLATFORMATIC_READY_PATH, installPlatformatic, sqliteConnectionString, startPlatformatic } from './lib/platformatic.mjs';
import { makeTempDir, request, runMain, startServers } from './lib/processes.mjs';
import { median, printTable, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';
import { assertWrk } from './lib/wrk.mjs';
import { PICK_SLOT, interleavedWrk, measureWithWrk, wrkProblems } from './lib/wrk-lua.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'graphql-platformatic.json');
const ADMIN_KEY = 'ck_bench_graphql_0123456789abcdef';
const COUNTS = {
  users: intFromEnv('BENCH_USERS', 200, 1, 100_000),
  products: intFromEnv('BENCH_PRODUCTS', 500, 1, 100_000),
  orders: intFromEnv('BENCH_ORDERS', 2_000, 40, 1_000_000),
};
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 15);
const SLICES = intFromEnv('BENCH_GQL_SLICES', 4, 1, 50);
const CONNECTIONS = process.env.BENCH_CONNECTIONS ? settings.connections : 64;
const WRK = { connections: CONNECTIONS, timeoutSeconds: 10 };
const PAGE = 20;
/** Platformatic DB took over 60 s to start once on a saturated machine. */
const READY_TIMEOUT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** Issue 29: the point-4 query at least 1.5× Platformatic DB's generated GraphQL (informational: invalid runs fail, missed targets do not). */
const TARGET = 1.5;
const POSTGRES_CPU = { name: 'database', sample: () => cpuSecondsByName('postgres'), seconds: cpuSecondsBetween };
const PLATFORMATIC_TABLES = { users: true, products: true, orders: true, order_items: true };

const PARTS = (() => {
  const parts = (process.env.BENCH_PARTS || 'sqlite,pg').split(',').map((p) => p.trim());
  for (const p of parts) if (!['sqlite', 'pg'].includes(p)) throw new Error(`BENCH_PARTS takes sqlite and/or pg (comma-separated), got "${p}"`);
  return [...new Set(parts)];
})();

const KINDS = [
  { key: 'fixed', title: '20 orders + user + items + products, first page' },
  { key: 'random', title: 'the same, random window of 20 (uncached)' },
];

// ---------------------------------------------------------------------------------------------------
// The queries.

const CANON_SELECTION = 'edges { node { id status user { email } items { quantity product { name price { amount currency } } } } }';
const CANON_FIXED = `{ orders(first: ${PAGE}, sort: "id") { ${CANON_SELECTION} } }`;
const CANON_WINDOW = `query Window($after: String) { orders(first: ${PAGE}, sort: "id", after: $after) { ${CANON_SELECTION} } }`;
const CANON_CURSORS = 'query Cursors($after: String) { orders(first: 100, sort: "id", after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }';
const CANON_HEADERS = { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json', accept: 'application/json' };
const PLATFORMATIC_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** One GraphQL POST over a fresh connection: must answer 200 with data and no errors. */
async function graphql(base, headers, query, variables) {
  const res = await request('POST', `${base}/graphql`, { headers, body: { query, ...(variables ? { variables } : {}) }, timeoutMs: REQUEST_TIMEOUT_MS });
  if (res.status !== 200) throw new Error(`POST ${base}/graphql answered ${res.status}: ${res.body.slice(0, 500)}`);
  const json = JSON.parse(res.body);
  if (json.errors || !json.data) throw new Error(`POST ${base}/graphql answered errors: ${JSON.stringify(json.errors ?? json).slice(0, 500)}`);
  return { data: json.data, bytes: Buffer.byteLength(res.body) };
}

const INTROSPECTION = `{ __schema { queryType { name } types { name fields { name args { name } type { name kind ofType { name kind ofType { name kind ofType { name } } } } } } } }`;

/** The named type under NON_NULL and LIST wrappers, and whether a LIST was among them. */
function unwrap(type) {
  let list = false;
  let t = type;
  while (t.kind === 'NON_NULL' || t.kind === 'LIST') {
    if (t.kind === 'LIST') list = true;
    t = t.ofType;
  }
  return { name: t.name, list };
}

/**
 * Platformatic's names, found by introspection: the Query field listing Order (with limit, offset, orderBy), Order's
 * field for its User and its list of OrderItem, OrderItem's Product, and Product's name and price columns.
 */
async function platformaticNames(base) {
  const { data } = await graphql(base, PLATFORMATIC_HEADERS, INTROSPECTION);
  const types = new Map(data.__schema.types.map((t) => [t.name, t]));
  const field = (typeName, target, list, args = []) => {
    const fields = types.get(typeName)?.fields ?? [];
    const found = fields.find((f) => {
      const u = unwrap(f.type);
      return u.name === target && u.list === list && args.every((a) => f.args.some((x) => x.name === a));
    });
    if (!found)
      throw new Error(
        `Platformatic's ${typeName} has no ${list ? 'list of ' : ''}${target}${args.length ? ` with ${args.join(', ')}` : ''}: ${fields.map((f) => f.name).join(', ')}`,
      );
    return found.name;
  };
  const scalar = (typeName, pattern) => {
    const found = (types.get(typeName)?.fields ?? []).find((f) => pattern.test(f.name));
    if (!found) throw new Error(`Platformatic's ${typeName} has no field like ${pattern}`);
    return found.name;
  };
  return {
    orders: field(data.__schema.queryType.name, 'Order', true, ['limit', 'offset', 'orderBy']),
    user: field('Order', 'User', false),
    items: field('Order', 'OrderItem', true),
    product: field('OrderItem', 'Product', false),
    amount: scalar('Product', /^price_?amount$/i),
    currency: scalar('Product', /^price_?currency$/i),
  };
}

function platformaticQueries(n) {
  const selection = `id status ${n.user} { email } ${n.items} { quantity ${n.product} { name ${n.amount} ${n.currency} } }`;
  const order = 'orderBy: [{ field: id, direction: ASC }]';
  return {
    fixed: `{ ${n.orders}(limit: ${PAGE}, ${order}) { ${selection} } }`,
    window: `query Window($offset: Int) { ${n.orders}(limit: ${PAGE}, offset: $offset, ${order}) { ${selection} } }`,
  };
}

// ---------------------------------------------------------------------------------------------------
// The checks: both answers reduced to the same shape, items sorted (neither side promises an item order).

const itemKey = (quantity, name, amount, currency) => `${quantity} x ${name} @ ${amount} ${currency}`;

function canonOrders(data) {
  return data.orders.edges.map(({ node: o }) => ({
    id: o.id,
    status: o.status,
    email: o.user?.email,
    items: o.items.map((i) => itemKey(i.quantity, i.product?.name, i.product?.price.amount, i.product?.price.currency)).sort(),
  }));
}

function platformaticOrders(data, n) {
  return data[n.orders].map((o) => ({
    id: o.id,
    status: o.status,
    email: o[n.user]?.email,
    items: o[n.items].map((i) => itemKey(i.quantity, i[n.product]?.name, i[n.product]?.[n.amount], i[n.product]?.[n.currency])).sort(),
  }));
}

/** Throws unless both lists hold PAGE orders, the expected ids in order, with the same statuses, users and items. */
function sameOrders(what, canon, platformatic, expectedIds) {
  if (canon.length !== PAGE || platformatic.length !== PAGE)
    throw new Error(`${what}: Canon answered ${canon.length} orders, Platformatic ${platformatic.length}, expected ${PAGE}`);
  if (canon.map((o) => o.id).join() !== expectedIds.join()) throw new Error(`${what}: Canon's orders are not the expected ones (${canon[0].id} … vs ${expectedIds[0]} …)`);
  for (let i = 0; i < PAGE; i++) {
    const [c, p] = [JSON.stringify(canon[i]), JSON.stringify(platformatic[i])];
    if (c !== p) throw new Error(`${what}: order ${i} differs:\n  Canon        ${c}\n  Platformatic ${p}`);
    if (canon[i].items.length < 1 || canon[i].items.length > 4) throw new Error(`${what}: order ${canon[i].id} has ${canon[i].items.length} items`);
  }
  return { orders: PAGE, items: canon.reduce((sum, o) => sum + o.items.length, 0) };
}

/** Every order's cursor in Canon, in id order (the cursor of order k-1 opens the window starting at k). */
async function canonCursors(base) {
  const cursors = [];
  let after = null;
  for (let page = 0; page < Math.ceil(COUNTS.orders / 100) + 1; page++) {
    const { data } = await graphql(base, CANON_HEADERS, CANON_CURSORS, { after });
    for (const e of data.orders.edges) cursors.push({ id: e.node.id, cursor: e.cursor });
    if (!data.orders.pageInfo.hasNextPage) return cursors;
    after = data.orders.pageInfo.endCursor;
  }
  throw new Error(`Canon's orders did not end after ${cursors.length} (expected ${COUNTS.orders})`);
}

/** A wrk load: a POST of `body` to /graphql, counting GraphQL errors; `pick` when the body holds PICK_SLOT. */
function load(base, headers, body, check, pick) {
  return { url: `${base}/graphql`, method: 'POST', headers, body, status: 200, graphql: true, check, ...(pick ? { pick } : {}) };
}

/** Checks both servers' answers against each other and against the seeded rows; returns the loads per server and kind. */
async function prepare(handles, rows, seed) {
  const canonBase = handles.canon.base;
  const pltBase = handles.platformatic.base;
  const names = await platformaticNames(pltBase);
  const plt = platformaticQueries(names);
  const ids = rows.orders.map((o) => o.id).sort();

  const canonFixed = await graphql(canonBase, CANON_HEADERS, CANON_FIXED);
  const pltFixed = await graphql(pltBase, PLATFORMATIC_HEADERS, plt.fixed);
  const fixedCheck = sameOrders('fixed', canonOrders(canonFixed.data), platformaticOrders(pltFixed.data, names), ids.slice(0, PAGE));

  const cursors = await canonCursors(canonBase);
  if (cursors.map((c) => c.id).join() !== ids.join()) throw new Error(`Canon lists ${cursors.length} orders, not the ${ids.length} seeded in id order`);
  const windows = ids.length - PAGE + 1;
  const canonWindow = (k) => (k === 0 ? null : cursors[k - 1].cursor);
  const checked = [];
  for (const k of [0, Math.floor(windows / 2), windows - 1]) {
    const c = await graphql(canonBase, CANON_HEADERS, CANON_WINDOW, { after: canonWindow(k) });
    const p = await graphql(pltBase, PLATFORMATIC_HEADERS, plt.window, { offset: k });
    checked.push({ offset: k, ...sameOrders(`window at ${k}`, canonOrders(c.data), platformaticOrders(p.data, names), ids.slice(k, k + PAGE)), bytes: [c.bytes, p.bytes] });
  }
  const offsets = Array.from({ length: windows }, (_, k) => k);
  const body = (query, variable) => `{"query":${JSON.stringify(query)},"variables":{"${variable}":${PICK_SLOT}}}`;
  return {
    names,
    queries: { canon: { fixed: CANON_FIXED, window: CANON_WINDOW }, platformatic: plt },
    canon: {
      fixed: load(canonBase, CANON_HEADERS, JSON.stringify({ query: CANON_FIXED }), { ...fixedCheck, bodyBytes: canonFixed.bytes }),
      random: load(canonBase, CANON_HEADERS, body(CANON_WINDOW, 'after'), { windows, checked }, { seed, values: offsets.map((k) => JSON.stringify(canonWindow(k))) }),
    },
    platformatic: {
      fixed: load(pltBase, PLATFORMATIC_HEADERS, JSON.stringify({ query: plt.fixed }), { ...fixedCheck, bodyBytes: pltFixed.bytes }),
      random: load(pltBase, PLATFORMATIC_HEADERS, body(plt.window, 'offset'), { windows, checked }, { seed, values: offsets.map(String) }),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// A repeat, and the parts.

const LABELS = { canon: 'Canon', platformatic: 'Platformatic DB' };

async function runRepeat({ part, repeat, handles, rows, pinned, dir }) {
  // The same seed for both servers: the same windows in the same order.
  const loads = await prepare(handles, rows, 1000 + repeat);
  const extraCpu = part === 'pg' ? POSTGRES_CPU : undefined;
  const order = repeat % 2 === 1 ? ['canon', 'platformatic'] : ['platformatic', 'canon'];
  const results = {};
  const interleaved = {};
  for (const kind of KINDS) {
    results[kind.key] = {};
    for (const who of order) {
      const label = `${part} r${repeat}: ${LABELS[who]} ${kind.key}`;
      const idle = Object.entries(handles)
        .filter(([key]) => key !== who)
        .map(([, h]) => h.server);
      const r = await measureWithWrk(handles[who].server, loads[who][kind.key], { label, pinned, dir, extraCpu, idle, ...WRK });
      results[kind.key][who] = { ...r, check: loads[who][kind.key].check };
    }
    interleaved[kind.key] = await interleavedWrk(
      order.map((who) => ({ key: who, server: handles[who].server, load: loads[who][kind.key] })),
      { slices: SLICES, seconds: Math.max(1, Math.round(settings.duration / 2)), label: `${part} r${repeat}: ${kind.key}`, pinned, dir, ...WRK },
    );
  }
  const ratios = {};
  for (const kind of KINDS) {
    ratios[kind.key] = results[kind.key].canon.requestsPerSecond.average / results[kind.key].platformatic.requestsPerSecond.average;
    ratios[`${kind.key}Interleaved`] = interleaved[kind.key].canon.requestsPerSecond / interleaved[kind.key].platformatic.requestsPerSecond;
  }
  return { names: loads.names, queries: loads.queries, results, interleaved, ratios };
}

const loadAverage = () => os.loadavg().map((x) => Number(x.toFixed(2)));

async function sqlitePart({ pinning, install, rows }) {
  const dir = makeTempDir('canon-bench-graphql-');
  const canonFile = path.join(dir, 'canon.db');
  const pltFile = path.join(dir, 'platformatic.db');
  const store = await openCanonStore(`sqlite:${canonFile}`);
  const seedSeconds = await seedCanonCommerce(store, rows);
  await store.close();
  await writePlainSqlite(pltFile, rows);
  console.log(`bench: sqlite: seeded ${describe(rows)} through Canon's store in ${seedSeconds.toFixed(2)} s, and into Platformatic's own file`);
  const loadAverageAtStart = loadAverage();
  const repeats = [];
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    const copy = (from, who) => {
      const f = path.join(dir, `r${repeat}-${who}.db`);
      copyFileSync(from, f);
      return f;
    };
    const canonName = `canon-graphql-sqlite-r${repeat}`;
    const specs = [
      {
        key: 'canon',
        start: (port) => startCanon(port, { databaseUrl: `sqlite:${copy(canonFile, 'canon')}`, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: canonName }),
      },
      {
        key: 'platformatic',
        readyPath: PLATFORMATIC_READY_PATH,
        start: (port) =>
          startPlatformatic(port, { install, connectionString: sqliteConnectionString(copy(pltFile, 'platformatic')), pinned: pinning.pinned, include: PLATFORMATIC_TABLES }),
      },
    ];
    const r = await startServers(specs, (handles) => runRepeat({ part: 'sqlite', repeat, handles, rows, pinned: pinning.pinned, dir }), READY_TIMEOUT_MS);
    const profile = reportProfile(canonName);
    repeats.push({ repeat, ...r, ...(profile ? { profile } : {}) });
  }
  return { part: 'sqlite', counts: COUNTS, items: rows.orderItems.length, seedSeconds, loadAverage: { start: loadAverageAtStart, end: loadAverage() }, repeats };
}

async function pgPart({ pinning, install, rows }) {
  const canonDb = await createDatabase();
  const store = await openCanonStore(canonDb.url);
  const seedSeconds = await seedCanonCommerce(store, rows);
  await store.close();
  await withClient(canonDb.name, (c) => c.query('VACUUM ANALYZE'));
  const pltDb = await createDatabase();
  await withClient(pltDb.name, (c) => writePlainPg(c, rows));
  console.log(`bench: pg: seeded ${describe(rows)} through Canon's PgStore in ${seedSeconds.toFixed(2)} s (then VACUUM ANALYZE), and into Platformatic's own database`);
  const dir = makeTempDir('canon-bench-graphql-pg-');
  const loadAverageAtStart = loadAverage();
  const repeats = [];
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    const canonName = `canon-graphql-pg-r${repeat}`;
    const specs = [
      { key: 'canon', start: (port) => startCanon(port, { databaseUrl: canonDb.url, adminKey: ADMIN_KEY, pinned: pinning.pinned, profileName: canonName }) },
      {
        key: 'platformatic',
        readyPath: PLATFORMATIC_READY_PATH,
        start: (port) => startPlatformatic(port, { install, connectionString: pltDb.url, pinned: pinning.pinned, include: PLATFORMATIC_TABLES }),
      },
    ];
    const r = await startServers(specs, (handles) => runRepeat({ part: 'pg', repeat, handles, rows, pinned: pinning.pinned, dir }), READY_TIMEOUT_MS);
    const profile = reportProfile(canonName);
    repeats.push({ repeat, ...r, ...(profile ? { profile } : {}) });
  }
  return {
    part: 'pg',
    postgresVersion: canonDb.version,
    counts: COUNTS,
    items: rows.orderItems.length,
    seedSeconds,
    loadAverage: { start: loadAverageAtStart, end: loadAverage() },
    repeats,
  };
}

const describe = (rows) => `${fmt(rows.users.length)} users, ${fmt(rows.products.length)} products, ${fmt(rows.orders.length)} orders, ${fmt(rows.orderItems.length)} items`;

// ---------------------------------------------------------------------------------------------------
// Reporting.

function table(header, body) {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of body) console.log(line(r));
}

/** Medians over the repeats: ratios (sequential and interleaved), req/s, p50/p99, server CPU µs per request. */
function summarise(part) {
  const med = (f) => {
    const values = part.repeats.map(f).filter((x) => Number.isFinite(x));
    return values.length > 0 ? median(values) : null;
  };
  const times = (x) => (Number.isFinite(x) ? `${fmt(x, 2)}x` : 'n/a');
  const out = {};
  const body = [];
  for (const kind of KINDS) {
    const m = {};
    for (const who of ['canon', 'platformatic']) {
      m[who] = {
        requestsPerSecond: med((r) => r.results[kind.key][who].requestsPerSecond.average),
        interleavedRequestsPerSecond: med((r) => r.interleaved[kind.key][who].requestsPerSecond),
        p50Ms: med((r) => r.results[kind.key][who].latencyMs.p50),
        p99Ms: med((r) => r.results[kind.key][who].latencyMs.p99),
        serverCpuMicrosPerRequest: med((r) => r.results[kind.key][who].serverCpuMicrosPerRequest),
        ...(part.part === 'pg' ? { databaseCpuShare: med((r) => r.results[kind.key][who].cpuUtilisation.database) } : {}),
      };
    }
    m.ratio = med((r) => r.ratios[kind.key]);
    m.ratioInterleaved = med((r) => r.ratios[`${kind.key}Interleaved`]);
    // Server CPU per request, Platformatic's over Canon's: what a request costs, less moved than req/s by other load on the core.
    m.cpuPerRequestRatio = med((r) => r.results[kind.key].platformatic.serverCpuMicrosPerRequest / r.results[kind.key].canon.serverCpuMicrosPerRequest);
    m.target = TARGET;
    m.met = Number.isFinite(m.ratioInterleaved) && m.ratioInterleaved >= TARGET;
    out[kind.key] = m;
    for (const who of ['canon', 'platformatic']) {
      body.push([
        `${kind.key}: ${LABELS[who]}`,
        part.repeats.map((r) => fmt(r.results[kind.key][who].requestsPerSecond.average)).join(' / '),
        fmt(m[who].interleavedRequestsPerSecond),
        fmt(m[who].p50Ms, 2),
        fmt(m[who].p99Ms, 2),
        fmt(m[who].serverCpuMicrosPerRequest, 0),
        who === 'canon' ? times(m.ratio) : '',
        who === 'canon' ? `${times(m.ratioInterleaved)} (${part.repeats.map((r) => times(r.ratios[`${kind.key}Interleaved`])).join(' / ')})` : '',
        who === 'canon' ? times(m.cpuPerRequestRatio) : '',
        who === 'canon' ? `>= ${TARGET}x: ${m.met ? 'MET' : 'NOT MET'}` : '',
      ]);
    }
  }
  console.log(
    `\n${part.part === 'sqlite' ? 'SQLite' : `PostgreSQL ${part.postgresVersion}`}: ${fmt(part.counts.orders)} orders (${fmt(part.items)} items), ${part.repeats.length} repeat(s); ` +
      `load average ${part.loadAverage.start.join(' ')} at start, ${part.loadAverage.end.join(' ')} at end`,
  );
  table(
    ['kind: server', 'req/s per repeat', 'interleaved req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'Canon/Plt seq.', 'Canon/Plt interleaved', 'Plt/Canon CPU per req', 'issue 29'],
    body,
  );
  const first = part.repeats[0].results;
  console.log(`response bytes, Canon / Platformatic: fixed ${first.fixed.canon.check.bodyBytes} / ${first.fixed.platformatic.check.bodyBytes}`);
  return out;
}

async function main() {
  assertWrk();
  const pinning = setUpPinning();
  const install = await installPlatformatic();
  const rows = commerceRows(COUNTS);
  console.log(
    `bench: Canon GraphQL vs Platformatic DB ${install.versions['@platformatic/db']} (${PARTS.join(', ')}; ${REPEATS} repeats) | node ${process.version} | ${CORES} cores (${CPU_MODEL}) | ` +
      (pinning.pinned ? `servers on core ${pinning.serverCore}, client on core ${pinning.clientCore ?? 'unpinned'}` : 'UNPINNED') +
      ` | wrk -t1 -c${CONNECTIONS} | warm-up ${settings.warmup} s, measured ${settings.duration} s, ${SLICES} interleaved slices of ${Math.max(1, Math.round(settings.duration / 2))} s | load average ${loadAverage().join(' ')}`,
  );
  const parts = {};
  for (const part of PARTS) parts[part] = part === 'sqlite' ? await sqlitePart({ pinning, install, rows }) : await pgPart({ pinning, install, rows });

  const source = sourceVersion();
  const runs = Object.values(parts).flatMap((p) => p.repeats.flatMap((r) => Object.values(r.results).flatMap((byWho) => Object.values(byWho))));
  const problems = [...runs.flatMap(wrkProblems), ...sourceProblems(source)];
  console.log('');
  printTable(runs, { extraCpu: PARTS.includes('pg') ? 'database' : undefined });
  const medians = {};
  for (const [name, part] of Object.entries(parts)) medians[name] = summarise(part);
  console.log(
    `\nclient: wrk -t1 -c${CONNECTIONS}${pinning.pinned ? ` on core ${CLIENT_CORE}` : ''}; Platformatic DB: Mercurius without jit (its default, graphql-jit off); Canon: graphql-jit.`,
  );
  warnAboutCpu(runs);

  writeResults(RESULTS_FILE, {
    ...resultsHeader('graphql-platformatic', source, pinning, {
      client: `wrk -t1 -c${CONNECTIONS} --timeout ${WRK.timeoutSeconds}s, ${pinning.pinned ? `taskset -c ${CLIENT_CORE}` : 'unpinned'}; Lua script counting GraphQL errors`,
      connections: CONNECTIONS,
      repeats: REPEATS,
      interleavedSlices: SLICES,
      parts: PARTS,
      counts: COUNTS,
      order: 'per repeat: fresh servers (SQLite: fresh copies of both files); per kind Canon then Platformatic (reversed on even repeats), then both in alternating slices',
      data: "Canon: its own store and tables; Platformatic DB: its own SQLite file / PostgreSQL database with the same rows in a plain schema with foreign keys (Canon's tables have none)",
      platformatic: {
        versions: install.versions,
        graphql: 'default settings: Mercurius without jit (graphql-jit off), parse cache and loaders on',
        tables: Object.keys(PLATFORMATIC_TABLES),
      },
      target: `fixed and random: Canon/Platformatic >= ${TARGET}x (issue 29), judged on the interleaved ratio`,
      canonEnvironment: Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CANON_'))),
    }),
    parts,
    medians,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
