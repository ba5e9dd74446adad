// A V8 CPU profile's self time split into categories of work (SQL/driver, count, rendering, links, ETag, auth, rate limit, cache bookkeeping, Fastify, …) by the source file of the frames.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fmt, settings } from './options.mjs';
import { profileFileOf } from './canon.mjs';

/**
 * Issue 31.4 asks where the time goes per kind of request. topSelfTime (bench/lib/canon.mjs) lists functions;
 * this sums them into the categories the issue names. A sample's category is decided by its stack, leaf first:
 * native frames (no script URL: better-sqlite3's `all`, JSON.stringify, a socket's writev) are charged to the
 * nearest caller with one, so a statement's run counts as SQL and a stringify inside rendering as rendering.
 * Rules (first match on that frame): the count (SQLite: the `get` that list() calls after the page's `all`,
 * src/store/sqlite/sqlite-ops.ts; on PostgreSQL the count runs beside the page on another connection, and
 * what Canon spends on it is driver work, counted as SQL), names with etag, with link, then paths.
 */
export const CATEGORIES = [
  'SQL/driver',
  'count',
  'rendering',
  'links',
  'ETag',
  'auth',
  'rate limit',
  'cache bookkeeping',
  'query planning',
  'Fastify',
  'Canon HTTP (routes, transport)',
  'other Canon',
  'Node core (http, net)',
  'GC',
  'other',
];

const SQL_MODULES = /\/node_modules\/(better-sqlite3|pg|pg-protocol|pg-pool|pg-types|pg-connection-string|postgres-array|postgres-bytea|postgres-date|postgres-interval|pgpass)\//;
const FASTIFY_MODULES =
  /\/node_modules\/(fastify|@fastify\/[^/]+|find-my-way|light-my-request|avvio|fast-json-stringify|fast-querystring|fast-uri|fastq|pino|pino-std-serializers|sonic-boom|abstract-logging|process-warning|toad-cache|secure-json-parse|rfdc|fast-decode-uri-component|safe-regex2|ret|on-exit-leak-free|thread-stream|atomic-sleep|quick-format-unescaped|fast-redact|real-require|safe-stable-stringify)\//;

/** The category of one frame with a script URL (and the native leaf under it, if any), or undefined to look further up. */
function categoryOf(frame, nativeLeaf) {
  const { url, functionName } = frame;
  if (url.startsWith('node:')) return 'Node core (http, net)';
  if (SQL_MODULES.test(url)) return 'SQL/driver';
  if (FASTIFY_MODULES.test(url)) return 'Fastify';
  const at = url.indexOf('/dist/src/');
  if (at < 0) return url.includes('/node_modules/') ? 'other' : undefined;
  const file = url.slice(at + '/dist/src/'.length);
  if (file === 'store/sqlite/sqlite-ops.js' && functionName === 'list' && nativeLeaf === 'get') return 'count';
  if (/etag/i.test(functionName) || file === 'http/rendering/conditional.js') return 'ETag';
  if (/link/i.test(functionName)) return 'links';
  if (file.startsWith('auth/') || file === 'http/transport/auth-hooks.js' || file === 'services/access.js' || file === 'services/permissions.js') return 'auth';
  if (file.startsWith('limits/')) return 'rate limit';
  if (/^(store\/list-cache|store\/offset-seeks|store\/sqlite\/record-cache|store\/postgres\/epoch-reader|lib\/deep-freeze|http\/rendering\/document-cache)\.js$/.test(file))
    return 'cache bookkeeping';
  if (file.startsWith('store/')) return 'SQL/driver';
  if (file.startsWith('http/rendering/') || file === 'services/views.js' || file === 'model/output-schema.js') return 'rendering';
  if (file.startsWith('query/') || file === 'http/routes/list-plans.js' || file === 'services/list-pages.js') return 'query planning';
  if (file.startsWith('http/')) return 'Canon HTTP (routes, transport)';
  return 'other Canon';
}

/** Self time (µs) per category of a .cpuprofile file, idle left out. */
export function splitProfile(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map();
  const nodeCategory = (id) => {
    if (memo.has(id)) return memo.get(id);
    const leaf = byId.get(id).callFrame;
    let category;
    if (leaf.functionName === '(idle)') category = null;
    else if (leaf.functionName === '(garbage collector)') category = 'GC';
    else if (leaf.functionName === '(program)' || leaf.functionName === '(root)') category = 'other';
    else {
      const nativeLeaf = leaf.url ? undefined : leaf.functionName;
      for (let at = id; at !== undefined && category === undefined; at = parent.get(at)) {
        const frame = byId.get(at).callFrame;
        if (frame.url) category = categoryOf(frame, nativeLeaf);
      }
      category ??= 'other';
    }
    memo.set(id, category);
    return category;
  };
  const micros = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const category = nodeCategory(id);
    const us = profile.timeDeltas[i] ?? 0;
    if (category === null) return;
    micros[category] += us;
    busy += us;
  });
  return { file, busyMs: busy / 1000, micros };
}

/**
 * With BENCH_CPU_PROF set: prints (and returns) Canon profile `profileName`'s split; with `cpuMicrosPerRequest`
 * (the server CPU per request measured without the profiler's help) also µs per request per category.
 */
export function reportSplit(profileName, { title = profileName, cpuMicrosPerRequest } = {}) {
  if (!settings.cpuProfileDir) return undefined;
  const file = profileFileOf(profileName);
  if (!existsSync(file)) {
    console.warn(`bench: WARNING no CPU profile at ${file} (did Canon exit cleanly?)`);
    return undefined;
  }
  const split = splitProfile(file);
  const shares = Object.entries(split.micros)
    .filter(([, us]) => us > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([category, us]) => ({
      category,
      share: us / (split.busyMs * 1000),
      ...(cpuMicrosPerRequest ? { microsPerRequest: (us / (split.busyMs * 1000)) * cpuMicrosPerRequest } : {}),
    }));
  console.log(`bench: CPU split ${title} (${path.basename(file)}, ${Math.round(split.busyMs)} ms busy):`);
  console.log(`  ${shares.map((s) => `${s.category} ${fmt(s.share * 100, 1)}%${s.microsPerRequest !== undefined ? ` (${fmt(s.microsPerRequest, 1)} µs)` : ''}`).join(' | ')}`);
  return { file: split.file, busyMs: split.busyMs, shares };
}
