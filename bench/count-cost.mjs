#!/usr/bin/env node
// Benchmark (issue 31.6): what the exact total of an offset page costs, whether it grows with the offset, and how often it is paid for one filter.
//
//   node bench/count-cost.mjs          (expects a fresh build in dist/: npx tsc -p . or node scripts/build.mjs)
//
// In this process, through Canon's own store (no HTTP), on BENCH_COUNT_SIZES products (default 2000,100000) seeded
// with the reference model, on each store of BENCH_PARTS (sqlite,pg). For three filters (none; status=active;
// status=active and price >= 500.00 EUR, sorted by price descending) and three offsets (0, the middle, the last
// page), each read BENCH_COUNT_READS times (default 200) in turn:
//   page     the page alone (limit 20), no total: the baseline
//   counted  the same page with its total (ListQuery.withTotal), the list cache off: what every request paid before
//            counts were kept, and what one pays now when its filter's count is not kept
//   kept     the same page through the list cache (ListQuery.shared), its count kept for the filter: after the
//            first page of a filter, a page of it costs its page query alone, whatever its offset
// Reported: µs per read (median of the reads) and `counted − page`, the count's own cost. Before measuring, the
// kept store's total is checked against the count.
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { openCanonStore, seedProducts } from './lib/canon.mjs';
import { createDatabase, withClient } from './lib/pg.mjs';
import { RESULTS_DIR, fmt, intFromEnv } from './lib/options.mjs';
import { runMain } from './lib/processes.mjs';
import { machine, median, sourceVersion, writeResults } from './lib/report.mjs';

const RESULTS_FILE = path.join(RESULTS_DIR, 'count-cost.json');
const READS = intFromEnv('BENCH_COUNT_READS', 200, 10, 100_000);
const SIZES = (process.env.BENCH_COUNT_SIZES || '2000,100000').split(',').map((s) => {
  if (!/^\d+$/.test(s.trim()) || Number(s) < 100 || Number(s) > 1_000_000) throw new Error(`BENCH_COUNT_SIZES takes sizes from 100 to 1,000,000, got "${s}"`);
  return Number(s);
});
const PARTS = (process.env.BENCH_PARTS || 'sqlite,pg').split(',').map((p) => {
  if (!['sqlite', 'pg'].includes(p.trim())) throw new Error(`BENCH_PARTS takes sqlite and pg, got "${p}"`);
  return p.trim();
});
const LIMIT = 20;
const FILTERS = [
  { name: 'none', where: [], orderBy: [{ path: 'id', desc: false }] },
  { name: 'status=active', where: [{ path: 'status', op: 'eq', value: 'active' }], orderBy: [{ path: 'id', desc: false }] },
  {
    name: 'active, price >= 500, by price desc',
    where: [
      { path: 'status', op: 'eq', value: 'active' },
      { path: 'price.amount', op: 'gte', value: 50_000 },
    ],
    orderBy: [
      { path: 'price.amount', desc: true },
      { path: 'id', desc: false },
    ],
  },
];

/** µs per call of `fn`, the median of `READS` calls (each awaited), after a tenth as many unmeasured. */
async function perCall(fn) {
  for (let i = 0; i < Math.ceil(READS / 10); i++) await fn(i);
  const times = [];
  for (let i = 0; i < READS; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return median(times);
}

/** Opens the store twice on one seeded database: with its list cache, and without (every count run). */
async function openBoth(part, size) {
  let url;
  let dir;
  let database;
  if (part === 'sqlite') {
    dir = mkdtempSync(path.join(os.tmpdir(), 'canon-count-'));
    url = `sqlite:${path.join(dir, 'count.db')}`;
  } else {
    database = await createDatabase();
    url = database.url;
  }
  const seeder = await openCanonStore(url);
  const seeded = await seedProducts(seeder, size, { batch: 10_000 });
  await seeder.close();
  console.log(`bench: ${part}: seeded ${fmt(size)} products in ${seeded.seconds.toFixed(1)} s`);
  const kept = await openCanonStore(url);
  const plain = await openCanonStore(url, { listCache: false });
  // Statistics for the planner and the visibility map (index-only scans), as a served database has them; and the kept
  // counts' rows without the dead versions a load in batches of 10,000 leaves (each row inserted updated its keys'
  // rows once), as autovacuum leaves them within a minute (docs/BENCHMARKS.md, "Kept counts").
  if (database) await withClient(database.name, (c) => c.query('VACUUM ANALYZE products, canon_counts'));
  return {
    kept,
    plain,
    close: async () => {
      await kept.close();
      await plain.close();
      if (dir && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function measure(part, size) {
  const { kept, plain, close } = await openBoth(part, size);
  const rows = [];
  try {
    for (const f of FILTERS) {
      const total = (await plain.list('products', { where: f.where, orderBy: f.orderBy, limit: 1, withTotal: true })).total;
      const last = Math.max(0, total - LIMIT);
      for (const [label, offset] of [
        ['0', 0],
        ['middle', Math.floor(last / 2)],
        ['last page', last],
      ]) {
        const q = { where: f.where, orderBy: f.orderBy, limit: LIMIT, offset };
        const page = await perCall(() => plain.list('products', q));
        const counted = await perCall(() => plain.list('products', { ...q, withTotal: true }));
        // Through the list cache: a new request each time (no kept page answers it: `since` and the offset
        // differ), the count kept for the filter after the first. Pages at random offsets around this one, so
        // the kept page does not answer; the offset seeks start from positions learnt by earlier pages.
        const keptUs = await perCall(() =>
          kept.list('products', { ...q, offset: Math.max(0, offset - randomInt(0, Math.min(offset, 1000) + 1)), withTotal: true, shared: true, since: performance.now() }),
        );
        const check = await kept.list('products', { ...q, withTotal: true, shared: true, since: performance.now() });
        if (check.total !== total) throw new Error(`${part} ${f.name}: the kept count ${check.total} is not the count ${total}`);
        rows.push({
          store: part,
          products: size,
          filter: f.name,
          matching: total,
          offset: label,
          offsetValue: offset,
          pageUs: page,
          countedUs: counted,
          countUs: counted - page,
          keptUs,
        });
      }
    }
  } finally {
    await close();
  }
  return rows;
}

runMain(async () => {
  console.log(
    `bench: the total of offset pages (issue 31.6) | node ${process.version} | ${READS} reads per figure | sizes ${SIZES.map((n) => fmt(n)).join(', ')} | ${PARTS.join(', ')}`,
  );
  const all = [];
  for (const part of PARTS) for (const size of SIZES) all.push(...(await measure(part, size)));
  const header = ['store', 'products', 'filter', 'matching', 'offset', 'page µs', 'page + count µs', 'count µs', 'count kept: page µs'];
  const lines = all.map((r) => [
    r.store,
    fmt(r.products),
    r.filter,
    fmt(r.matching),
    `${r.offset} (${fmt(r.offsetValue)})`,
    r.pageUs.toFixed(1),
    r.countedUs.toFixed(1),
    r.countUs.toFixed(1),
    r.keptUs.toFixed(1),
  ]);
  console.log(`\n| ${header.join(' | ')} |\n|${header.map((_, i) => (i < 5 ? '---' : '---:')).join('|')}|`);
  for (const l of lines) console.log(`| ${l.join(' | ')} |`);
  writeResults(RESULTS_FILE, { benchmark: 'count-cost', date: new Date().toISOString(), machine: machine(), source: sourceVersion(), reads: READS, rows: all });
});
