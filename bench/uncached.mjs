#!/usr/bin/env node
// Benchmark (issue 31.1, 31.4): Canon against Platformatic DB on pages the response cache cannot answer: every request another page, its parameters drawn inside wrk.
//
//   node bench/uncached.mjs          (expects a fresh build in dist/: npx tsc -p . or node scripts/build.mjs)
//
// Equal data: BENCH_PRODUCTS products (default 2,000) seeded through Canon's store (bench/lib/peers.mjs); on SQLite
// each server of each run reads its own copy of the file, on PostgreSQL both read one database. Four scenarios,
// each request drawn at random by wrk's Lua (bench/lib/wrk-script.mjs), Platformatic asked for the same page with
// the same work (its count asked for with totalCount=true wherever Canon's answer carries pagination.total, and
// Canon's default order, by id, asked for: without an ORDER BY SQLite may walk a covering index of the fields
// asked for, and a sparse page of Platformatic's then lists other products):
//   offset    /v2/products?limit=20&offset=<0…n-20>
//   filtered  /v2/products?status=active&price.amount[gte]=<0…5400>&sort=-price.amount&limit=20&offset=<0…40>
//             (Platformatic: where.status.eq, where.priceAmount.gte, orderby.priceAmount=desc)
//   cursor    a random page of one of four walks (default order, active by price descending, by name, draft by
//             price), Canon's next_cursor collected beforehand; Platformatic DB 2.61 has no cursor, its page
//             is the same offset of the same order
//   sparse    /v2/products?fields=<one of 8 sets>&limit=20&offset=<0…n-20>
// Before measuring, BENCH_SAMPLES random requests per scenario (default 12) must give, on both servers, 200, the
// same number of items, the same total and the same ids in the same order. A third server, Canon with its page
// cache switched off (CANON_LIST_CACHE=off), shows the path itself.
// Every scenario starts its servers afresh (so that a CPU profile, BENCH_CPU_PROF, is one scenario's); in each,
// the servers are measured one after the other, the order turning every repeat. Servers on core 0, wrk -t1 on
// core 1. Any answer outside 2xx/3xx, socket error or timeout makes the run invalid. Results:
// bench/results/uncached.json.
//
// Environment: BENCH_DURATION, BENCH_WARMUP, BENCH_QUIET_WAIT, BENCH_CPU_PROF (as everywhere), BENCH_REPEATS
// (default 3), BENCH_PRODUCTS, BENCH_PARTS (sqlite,pg), BENCH_SCENARIOS (offset,filtered,cursor,sparse),
// BENCH_CONNECTIONS (default 64 here), BENCH_SAMPLES, BENCH_NO_CACHE (on/off: the third server, default on),
// BENCH_BASE_ROOT (a built worktree of an earlier commit: a fourth server, that build as built; issue 31.4 before/after).
import path from 'node:path';
import { assertWrk } from './lib/wrk.mjs';
import { setUpPinning } from './lib/cpu.mjs';
import { CLIENT_CORE, CORES, CPU_MODEL, RESULTS_DIR, fmt, intFromEnv, settings } from './lib/options.mjs';
import { CANON_HEADERS, PLATFORMATIC_FULL_FIELDS, POSTGRES_CPU, call, peerSpecs, rotation, seedPg, seedSqlite, withServers, writePool } from './lib/peers.mjs';
import { installPlatformatic } from './lib/platformatic.mjs';
import { makeTempDir, runMain } from './lib/processes.mjs';
import { reportSplit } from './lib/profile-split.mjs';
import { median, printTable, resultsHeader, sourceProblems, sourceVersion, warnAboutCpu, writeResults } from './lib/report.mjs';
import { measureScript, requestScript, wrkProblems } from './lib/wrk-script.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'uncached.json');
const PRODUCTS = intFromEnv('BENCH_PRODUCTS', 2_000, 600, 1_000_000);
const REPEATS = intFromEnv('BENCH_REPEATS', 3, 1, 15);
const SAMPLES = intFromEnv('BENCH_SAMPLES', 12, 1, 1000);
const CONNECTIONS = process.env.BENCH_CONNECTIONS ? settings.connections : 64;
const LIMIT = 20;
const TARGET = 1.5;
const list = (name, fallback, allowed) => {
  const values = [...new Set((process.env[name] || fallback).split(',').map((v) => v.trim()))];
  for (const v of values) if (!allowed.includes(v)) throw new Error(`${name} takes ${allowed.join(', ')} (comma-separated), got "${v}"`);
  return values;
};
const PARTS = list('BENCH_PARTS', 'sqlite,pg', ['sqlite', 'pg']);
const SCENARIOS = list('BENCH_SCENARIOS', 'offset,filtered,cursor,sparse', ['offset', 'filtered', 'cursor', 'sparse']);
const NO_CACHE = (() => {
  const v = process.env.BENCH_NO_CACHE || 'on';
  if (!['on', 'off'].includes(v)) throw new Error(`BENCH_NO_CACHE takes on or off, got "${v}"`);
  return v === 'on';
})();
// BENCH_BASE_ROOT: a worktree of an earlier commit, built: a fourth server, that build as built (issue 31.4's before).
const BASE_ROOT = process.env.BENCH_BASE_ROOT ? path.resolve(process.env.BENCH_BASE_ROOT) : undefined;
// Every server of a run is up while each is measured. On PostgreSQL, a build before 1c5b92d locks its webhook frontier
// at every tick, idle or not, and each such transaction's id moves the cluster's snapshot, which empties the caches of
// every other Canon beside it: such a BENCH_BASE_ROOT build makes the measured build look slower (2026-11-29: the
// random offset page 1.41x Platformatic DB beside one, 2.48x alone). Compare it in a run of its own instead.
if (BASE_ROOT && PARTS.includes('pg'))
  console.warn('bench: BENCH_BASE_ROOT on PostgreSQL: a base build before 1c5b92d empties the caches of every Canon beside it once a second; compare such builds in separate runs');
const SERVERS = ['canon', 'platformatic', ...(NO_CACHE ? ['canonNoCache'] : []), ...(BASE_ROOT ? ['canonBefore'] : [])];
const LABELS = { canon: 'Canon', platformatic: 'Platformatic DB', canonNoCache: 'Canon, page cache off', canonBefore: `Canon before (${BASE_ROOT})` };

// ---------------------------------------------------------------------------------------------------
// The scenarios. Each gives, for parameter values (wrk pieces while measuring, strings for the checks), the path
// on each server; `draw()` gives one set of concrete values for a check, as wrk's pieces would.

const randomInt = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1));
const FIELD_SETS = [
  ['name'],
  ['name', 'price'],
  ['price', 'status'],
  ['name', 'status', 'created_at'],
  ['description'],
  ['name', 'description', 'price'],
  ['status', 'tags', 'updated_at'],
  ['name', 'price', 'status', 'tags'],
];
// Platformatic camel-cases columns: price is price_amount and price_currency there.
const PLATFORMATIC_FIELD = {
  name: ['name'],
  price: ['priceAmount', 'priceCurrency'],
  status: ['status'],
  created_at: ['createdAt'],
  updated_at: ['updatedAt'],
  description: ['description'],
  tags: ['tags'],
};
const canonFields = FIELD_SETS.map((set) => ['id', ...set].join(','));
const platformaticFields = FIELD_SETS.map((set) => ['id', ...set.flatMap((f) => PLATFORMATIC_FIELD[f])].join(','));

/**
 * The walks a cursor scenario draws its pages from: Canon's query, and Platformatic's same order. Four whole
 * walks, then BENCH_CURSOR_WALKS (default 200) filtered ones, each from another price threshold, status and
 * direction: thousands of distinct pages, more than the page cache keeps (1,000 pages, 10,000 rows), so that
 * a page read again is rarely still kept (with the four walks alone, 268 pages, the cache answered nearly all).
 */
const CURSOR_WALKS = intFromEnv('BENCH_CURSOR_WALKS', 200, 0, 10_000);
const WALKS = [
  { canon: `/v2/products?limit=${LIMIT}`, platformatic: `/products?orderby.id=asc&limit=${LIMIT}` },
  { canon: `/v2/products?status=active&sort=-price.amount&limit=${LIMIT}`, platformatic: `/products?where.status.eq=active&orderby.priceAmount=desc&limit=${LIMIT}` },
  { canon: `/v2/products?sort=name&limit=${LIMIT}`, platformatic: `/products?orderby.name=asc&limit=${LIMIT}` },
  { canon: `/v2/products?status=draft&sort=price.amount&limit=${LIMIT}`, platformatic: `/products?where.status.eq=draft&orderby.priceAmount=asc&limit=${LIMIT}` },
  ...Array.from({ length: CURSOR_WALKS }, (_, i) => {
    const gte = Math.round((i * 60_000) / Math.max(1, CURSOR_WALKS));
    const status = ['active', 'draft', 'archived'][i % 3];
    const [sort, order] = i % 2 === 0 ? ['-price.amount', 'desc'] : ['price.amount', 'asc'];
    return {
      canon: `/v2/products?status=${status}&price.amount[gte]=${gte}&sort=${sort}&limit=${LIMIT}`,
      platformatic: `/products?where.status.eq=${status}&where.priceAmount.gte=${gte}&orderby.priceAmount=${order}&limit=${LIMIT}`,
    };
  }),
];

function scenarios(part) {
  const full = part === 'pg' ? `&fields=${PLATFORMATIC_FULL_FIELDS}` : '';
  const lastOffset = PRODUCTS - LIMIT;
  return {
    offset: {
      title: 'random offset page',
      total: true,
      params: { offset: { int: [0, lastOffset] } },
      draw: () => ({ offset: String(randomInt(0, lastOffset)) }),
      canon: (p) => [`/v2/products?limit=${LIMIT}&offset=`, p.offset],
      platformatic: (p) => [`/products?orderby.id=asc&limit=${LIMIT}&totalCount=true${full}&offset=`, p.offset],
    },
    filtered: {
      title: 'random filtered, sorted page',
      total: true,
      active: true,
      params: { gte: { int: [0, 5400] }, offset: { int: [0, 40] } },
      draw: () => ({ gte: String(randomInt(0, 5400)), offset: String(randomInt(0, 40)) }),
      canon: (p) => ['/v2/products?status=active&price.amount[gte]=', p.gte, `&sort=-price.amount&limit=${LIMIT}&offset=`, p.offset],
      platformatic: (p) => ['/products?where.status.eq=active&where.priceAmount.gte=', p.gte, `&orderby.priceAmount=desc&limit=${LIMIT}&totalCount=true${full}&offset=`, p.offset],
    },
    cursor: {
      title: 'random page of a cursor walk',
      total: false,
      // Filled by collectWalks: line i of each pool is the same page on both servers.
      params: { page: { line: 'walk' } },
      canon: (p) => [p.page],
      platformatic: (p) => [p.page],
    },
    sparse: {
      title: 'random sparse fields, random offset',
      total: true,
      params: { fields: { index: true }, offset: { int: [0, lastOffset] } },
      draw: () => ({ fields: String(randomInt(0, FIELD_SETS.length - 1)), offset: String(randomInt(0, lastOffset)) }),
      canon: (p) => ['/v2/products?fields=', p.fields.index ? { pick: canonFields } : canonFields[Number(p.fields)], `&limit=${LIMIT}&offset=`, p.offset],
      platformatic: (p) => [
        '/products?orderby.id=asc&fields=',
        p.fields.index ? { pick: platformaticFields } : platformaticFields[Number(p.fields)],
        `&limit=${LIMIT}&totalCount=true&offset=`,
        p.offset,
      ],
      keys: (p) => ({ canon: [...canonFields[Number(p.fields)].split(','), 'links'], platformatic: platformaticFields[Number(p.fields)].split(',') }),
    },
  };
}

/**
 * Walks every WALK to its end on Canon (next_cursor after next_cursor) and writes two pools: Canon's page paths
 * with their cursors, and Platformatic's same pages by offset (with the full-row fields on PostgreSQL).
 */
const collected = new Map();
async function collectWalks(base, part, dir) {
  // Cursors are signed with the benchmark's fixed CANON_SECRET (bench/lib/canon.mjs) over the same data: one
  // collection serves every repeat of a part.
  if (!collected.has(part)) collected.set(part, await walkAll(base, part, dir));
  return collected.get(part);
}

async function walkAll(base, part, dir) {
  const full = part === 'pg' ? `&fields=${PLATFORMATIC_FULL_FIELDS}` : '';
  const canon = [];
  const platformatic = [];
  for (const walk of WALKS) {
    let next = walk.canon;
    for (let page = 0; next !== undefined && page < PRODUCTS; page++) {
      canon.push(next);
      platformatic.push(`${walk.platformatic}&offset=${page * LIMIT}${full}`);
      const { json } = await call('GET', `${base}${next}`, { headers: CANON_HEADERS, status: 200 });
      const cursor = json.pagination?.next_cursor;
      next = typeof cursor === 'string' ? `${walk.canon}&cursor=${encodeURIComponent(cursor)}` : undefined;
    }
  }
  return {
    canon: writePool(dir, `walk-canon-${part}`, canon),
    platformatic: writePool(dir, `walk-platformatic-${part}`, platformatic),
    pages: canon.length,
    canonPaths: canon,
    platformaticPaths: platformatic,
  };
}

/** Checks SAMPLES random requests of `scenario` on Canon (and the cache-off Canon) against Platformatic: 200, item count, total, ids. */
async function checkSamples(name, scenario, handles, walks) {
  for (let i = 0; i < SAMPLES; i++) {
    let canonPath;
    let platformaticPath;
    let params;
    if (name === 'cursor') {
      const at = randomInt(0, walks.pages - 1);
      [canonPath, platformaticPath] = [walks.canonPaths[at], walks.platformaticPaths[at]];
    } else {
      params = scenario.draw();
      [canonPath, platformaticPath] = [scenario.canon(params).join(''), scenario.platformatic(params).join('')];
    }
    const p = await call('GET', `${handles.platformatic.base}${platformaticPath}`, { status: 200 });
    if (!Array.isArray(p.json)) throw new Error(`Platformatic ${platformaticPath}: not a list`);
    for (const who of SERVERS.filter((s) => s !== 'platformatic')) {
      const c = await call('GET', `${handles[who].base}${canonPath}`, { headers: CANON_HEADERS, status: 200 });
      const items = c.json.data;
      const what = `${name} sample ${i + 1} (${canonPath} vs ${platformaticPath}) on ${LABELS[who]}`;
      if (!Array.isArray(items) || items.length !== p.json.length) throw new Error(`${what}: ${items?.length} items vs Platformatic's ${p.json.length}`);
      if (items.map((x) => x.id).join() !== p.json.map((x) => x.id).join()) throw new Error(`${what}: other products or another order`);
      if (scenario.total) {
        const total = c.json.pagination?.total;
        const theirs = Number(p.headers['x-total-count']);
        if (total !== theirs) throw new Error(`${what}: total ${total} vs Platformatic's X-Total-Count ${p.headers['x-total-count']}`);
      }
      if (scenario.active && items.some((x) => x.status !== 'active')) throw new Error(`${what}: an item is not active`);
      if (scenario.keys) {
        const keys = scenario.keys(params);
        const sorted = (k) => [...k].sort().join();
        if (items.some((x) => sorted(Object.keys(x)) !== sorted(keys.canon))) throw new Error(`${what}: Canon's items have keys ${Object.keys(items[0])}`);
        if (p.json.some((x) => sorted(Object.keys(x)) !== sorted(keys.platformatic))) throw new Error(`${what}: Platformatic's items have keys ${Object.keys(p.json[0])}`);
      }
    }
  }
}

/** The wrk kinds of a scenario for one server: its path pieces, with Canon's key header. */
function kindsFor(name, scenario, who) {
  const pieces = who === 'platformatic' ? scenario.platformatic(scenario.params) : scenario.canon(scenario.params);
  return [{ name, method: 'GET', path: pieces, headers: who === 'platformatic' ? {} : CANON_HEADERS }];
}

async function runScenario({ part, data, name, scenario, repeat, pinning, install, dir }) {
  const urls =
    part === 'sqlite'
      ? { canon: data.copy().canon, platformatic: data.copy().platformatic, canonNoCache: data.copy().canon, canonBefore: data.copy().canon }
      : await (async () => {
          const db = await data.copy();
          return { canon: db.canon, platformatic: db.platformatic, canonNoCache: db.canon, canonBefore: db.canon };
        })();
  const profileNames = {
    canon: `canon-${part}-${name}-r${repeat}`,
    canonNoCache: `canon-nocache-${part}-${name}-r${repeat}`,
    canonBefore: `canon-before-${part}-${name}-r${repeat}`,
  };
  const specs = peerSpecs({
    urls,
    pinned: pinning.pinned,
    install,
    profileNames,
    extraCanons: [
      ...(NO_CACHE ? [{ key: 'canonNoCache', name: LABELS.canonNoCache, env: { CANON_LIST_CACHE: 'off' } }] : []),
      ...(BASE_ROOT ? [{ key: 'canonBefore', name: LABELS.canonBefore, cli: path.join(BASE_ROOT, 'dist/src/cli/main.js') }] : []),
    ],
  });
  const results = await withServers(specs, async (handles) => {
    const walks = name === 'cursor' ? await collectWalks(handles.canon.base, part, dir) : undefined;
    await checkSamples(name, scenario, handles, walks);
    console.log(`bench: ${part} r${repeat} ${name}: ${SAMPLES} random requests agree on every server${walks ? ` (${walks.pages} pages in ${WALKS.length} walks)` : ''}`);
    const out = {};
    for (const who of rotation(SERVERS, repeat)) {
      const pools = walks ? { walk: who === 'platformatic' ? walks.platformatic : walks.canon } : {};
      const kinds = kindsFor(name, scenario, who);
      const script = () => requestScript({ kinds, pools });
      const label = `${part} r${repeat}: ${LABELS[who]} ${name}`;
      const idle = Object.entries(handles).filter(([k]) => k !== who);
      const r = await measureScript(handles[who].server, `${handles[who].base}/`, script, {
        label,
        connections: CONNECTIONS,
        pinned: pinning.pinned,
        dir,
        extraCpu: part === 'pg' ? POSTGRES_CPU : undefined,
      });
      out[who] = { ...r, idleServers: idle.length };
    }
    return out;
  });
  const profiles = {};
  for (const who of ['canon', 'canonNoCache', 'canonBefore'].filter((w) => results[w])) {
    const split = reportSplit(profileNames[who], {
      title: `${part} ${name} ${LABELS[who]}`,
      cpuMicrosPerRequest: results[who].serverCpuMicrosPerRequest ?? undefined,
      window: results[who].window,
    });
    if (split) profiles[who] = split;
  }
  return { results, ...(Object.keys(profiles).length > 0 ? { profiles } : {}) };
}

async function runPart(part, { pinning, install }) {
  const dir = makeTempDir(`canon-bench-uncached-${part}-`);
  const data = part === 'sqlite' ? await seedSqlite(PRODUCTS, { pinned: pinning.pinned, dirPrefix: 'canon-bench-uncached-data-' }) : await seedPg(PRODUCTS);
  const all = scenarios(part);
  const out = { part, products: PRODUCTS, seedSeconds: data.seedSeconds, ...(data.postgresVersion ? { postgresVersion: data.postgresVersion } : {}), scenarios: {} };
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    for (const name of SCENARIOS) {
      const run = await runScenario({ part, data, name, scenario: all[name], repeat, pinning, install, dir });
      (out.scenarios[name] ??= { title: all[name].title, repeats: [] }).repeats.push({ repeat, ...run });
    }
  }
  return out;
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

function summarise(part) {
  const medians = {};
  const rows = [];
  for (const [name, s] of Object.entries(part.scenarios)) {
    const rps = (r, who) => r.results[who].requestsPerSecond.average;
    const ratio = (who) => s.repeats.map((r) => rps(r, who) / rps(r, 'platformatic'));
    const cpu = (who) => median(s.repeats.map((r) => r.results[who].serverCpuMicrosPerRequest).filter((x) => typeof x === 'number'));
    medians[name] = {
      canon: median(ratio('canon')),
      ...(NO_CACHE ? { canonNoCache: median(ratio('canonNoCache')) } : {}),
      ...(BASE_ROOT ? { canonBefore: median(ratio('canonBefore')), canonOverBefore: median(s.repeats.map((r) => rps(r, 'canon') / rps(r, 'canonBefore'))) } : {}),
    };
    rows.push([
      s.title,
      s.repeats.map((r) => fmt(rps(r, 'canon'))).join(' / '),
      s.repeats.map((r) => fmt(rps(r, 'platformatic'))).join(' / '),
      `${fmt(medians[name].canon, 2)}x`,
      NO_CACHE ? s.repeats.map((r) => fmt(rps(r, 'canonNoCache'))).join(' / ') : '-',
      NO_CACHE ? `${fmt(medians[name].canonNoCache, 2)}x` : '-',
      `>= ${TARGET}x`,
      `${fmt(cpu('canon'), 1)} / ${fmt(cpu('platformatic'), 1)}${NO_CACHE ? ` / ${fmt(cpu('canonNoCache'), 1)}` : ''}`,
      BASE_ROOT ? `${fmt(medians[name].canonBefore, 2)}x, ${fmt(cpu('canonBefore'), 1)} µs` : '-',
      BASE_ROOT ? `${fmt(medians[name].canonOverBefore, 2)}x` : '-',
    ]);
  }
  console.log(
    `\n${part.part === 'sqlite' ? 'SQLite' : `PostgreSQL ${part.postgresVersion}`}: ${fmt(part.products)} products, ${REPEATS} repeat(s); req/s per repeat, ratios are medians over repeats`,
  );
  table(
    [
      'scenario',
      'Canon req/s',
      'Platformatic req/s',
      'Canon/Plt',
      'Canon cache-off req/s',
      'cache-off/Plt',
      'issue 31',
      'server CPU µs/req (Canon / Plt / off)',
      'before/Plt, CPU',
      'Canon/before',
    ],
    rows,
  );
  return medians;
}

async function main() {
  assertWrk();
  const pinning = setUpPinning();
  const install = await installPlatformatic();
  console.log(
    `bench: uncached pages, Canon vs Platformatic DB ${install.versions['@platformatic/db']} (${PARTS.join(', ')}; ${SCENARIOS.join(', ')}; ${REPEATS} repeats) | node ${process.version} | ${CORES} cores (${CPU_MODEL}) | ` +
      (pinning.pinned ? `servers on core ${pinning.serverCore}, wrk on core ${CLIENT_CORE}` : 'UNPINNED') +
      ` | wrk -t1 -c${CONNECTIONS} | warm-up ${settings.warmup} s, measured ${settings.duration} s`,
  );
  const parts = {};
  for (const part of PARTS) parts[part] = await runPart(part, { pinning, install });
  const rows = Object.values(parts).flatMap((p) => Object.values(p.scenarios).flatMap((s) => s.repeats.flatMap((r) => Object.values(r.results))));
  const source = sourceVersion();
  const problems = [...rows.flatMap(wrkProblems), ...sourceProblems(source)];
  console.log('');
  printTable(rows, { extraCpu: PARTS.includes('pg') ? 'database' : undefined });
  const medians = {};
  for (const [name, part] of Object.entries(parts)) medians[name] = summarise(part);
  warnAboutCpu(rows);
  writeResults(RESULTS_FILE, {
    ...resultsHeader('uncached', source, pinning, {
      client: `wrk -t1 -c${CONNECTIONS}, requests drawn in Lua (bench/lib/wrk-script.mjs)${pinning.pinned ? `, taskset -c ${CLIENT_CORE}` : ''}`,
      connections: CONNECTIONS,
      repeats: REPEATS,
      samplesChecked: SAMPLES,
      order: 'per repeat and scenario: fresh servers; Canon, Platformatic and the cache-off Canon one after the other, the order turning by one each repeat',
      noCache: NO_CACHE ? 'a third Canon with CANON_LIST_CACHE=off' : 'not run',
      before: BASE_ROOT ?? 'not run',
      platformatic: { versions: install.versions, sqliteWalSynchronous: install.sqliteWalSynchronous },
      target: TARGET,
    }),
    parts,
    medians,
    valid: problems.length === 0,
    problems,
  });
  if (problems.length > 0) throw new Error(`the run is INVALID:\n  - ${problems.join('\n  - ')}`);
}

runMain(main);
