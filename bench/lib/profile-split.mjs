// A V8 CPU profile's self time split into categories of work (SQL/driver, count, rendering, links, ETag, auth, rate limit, cache bookkeeping, Fastify, …) by the source file of the frames.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, settings } from './options.mjs';
import { profileFileOf } from './canon.mjs';

/**
 * Issue 31.4 asks where the time goes per kind of request. topSelfTime (bench/lib/canon.mjs) lists functions;
 * this sums them into the categories the issue names. A sample's category is decided by its stack, leaf first:
 * native frames (no script URL: better-sqlite3's `all`, JSON.stringify, a socket's writev) are charged to the
 * nearest caller with one, so a statement's run counts as SQL and a stringify inside rendering as rendering.
 * Rules (first match on that frame): Node's I/O modules (the socket, HTTP, streams) are Node core; its helpers
 * (crypto, Buffer, URL, events) go to their caller, so a hash made for an ETag is the ETag's; then names with
 * etag, with link, then paths. The count: V8 charges a native
 * call such as better-sqlite3's `get` to the JavaScript function making it, so on SQLite the count and the page
 * are both list()'s self time (src/store/sqlite/sqlite-ops.ts); its line ticks (positionTicks) tell them apart,
 * the ticks on the line that runs `sql.count` going to count. On PostgreSQL the count runs beside the page on
 * another connection: what Canon spends on it is driver work, counted as SQL (its cost is the database's CPU).
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
  'Node core (other)',
  'GC',
  'other',
];

const SQL_MODULES = /\/node_modules\/(better-sqlite3|pg|pg-protocol|pg-pool|pg-types|pg-connection-string|postgres-array|postgres-bytea|postgres-date|postgres-interval|pgpass)\//;
const FASTIFY_MODULES =
  /\/node_modules\/(fastify|@fastify\/[^/]+|find-my-way|light-my-request|avvio|fast-json-stringify|fast-querystring|fast-uri|fastq|pino|pino-std-serializers|sonic-boom|abstract-logging|process-warning|toad-cache|secure-json-parse|rfdc|fast-decode-uri-component|safe-regex2|ret|on-exit-leak-free|thread-stream|atomic-sleep|quick-format-unescaped|fast-redact|real-require|safe-stable-stringify)\//;

/** Node's own modules whose work is the server's I/O: the socket, the HTTP parser and writer, streams. */
const NODE_IO = /^node:(net|http|_http_\w+|stream|internal\/(stream_base_commons|streams\/|http|net|js_stream_socket))/;
/** Node's helpers, charged to their caller. */
const NODE_HELPERS = /^node:(buffer|events|url|util|querystring|string_decoder|crypto|internal\/(crypto\/|url|util|buffer|querystring|validators|errors|event_target))/;

/** The category of one frame with a script URL (and the native leaf under it, if any), or undefined to look further up. */
function categoryOf(frame) {
  const { url, functionName } = frame;
  if (url.startsWith('node:')) {
    // Helpers (a hash, a Buffer, a URL, an event) are charged to whoever called them: the ETag's hash is the ETag's.
    if (NODE_HELPERS.test(url)) return undefined;
    return NODE_IO.test(url) ? 'Node core (http, net)' : 'Node core (other)';
  }
  if (SQL_MODULES.test(url)) return 'SQL/driver';
  if (FASTIFY_MODULES.test(url)) return 'Fastify';
  const at = url.indexOf('/dist/src/');
  if (at < 0) return url.includes('/node_modules/') ? 'other' : undefined;
  const file = url.slice(at + '/dist/src/'.length);
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

/** The 1-based lines of a compiled file that run the count query (`sql.count`), by its file: URL. */
const countLines = new Map();
function countLinesOf(url) {
  if (!countLines.has(url)) {
    let lines = new Set();
    try {
      const text = readFileSync(fileURLToPath(url), 'utf8').split('\n');
      lines = new Set(text.flatMap((line, i) => (line.includes('sql.count') ? [i + 1] : [])));
    } catch {
      // not readable: no count split
    }
    countLines.set(url, lines);
  }
  return countLines.get(url);
}

/**
 * Self time (µs) per category of a .cpuprofile file, idle left out. With `window` ({ startUs, endUs } on the
 * monotonic clock, as process.hrtime gives it: V8 stamps its samples with the same clock on Linux) only the
 * samples inside it: the measured run, not the process's start-up (module loading) or its warm-up and checks.
 * Where no sample falls inside (another clock), all of them, and `windowed` says so.
 */
export function splitProfile(file, window) {
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
      let at = id;
      for (; at !== undefined && category === undefined; at = parent.get(at)) {
        const frame = byId.get(at).callFrame;
        if (frame.url) category = categoryOf(frame);
      }
      // Socket work is the database's when the database driver asked for it (pg writing a query), the HTTP
      // server's otherwise: the first caller outside Node decides.
      if (category === 'Node core (http, net)') {
        for (; at !== undefined; at = parent.get(at)) {
          const { url } = byId.get(at).callFrame;
          if (!url || url.startsWith('node:')) continue;
          if (SQL_MODULES.test(url) || url.includes('/dist/src/store/')) category = 'SQL/driver';
          break;
        }
      }
      category ??= 'other';
    }
    memo.set(id, category);
    return category;
  };
  // SQLite's list(): the share of its self time spent on the count's line.
  const countShare = new Map();
  for (const n of profile.nodes) {
    const { url, functionName } = n.callFrame;
    if (functionName !== 'list' || !url.endsWith('/dist/src/store/sqlite/sqlite-ops.js') || !n.positionTicks) continue;
    const lines = countLinesOf(url);
    const all = n.positionTicks.reduce((sum, t) => sum + t.ticks, 0);
    const counted = n.positionTicks.filter((t) => lines.has(t.line)).reduce((sum, t) => sum + t.ticks, 0);
    if (all > 0) countShare.set(n.id, counted / all);
  }
  const count = (inWindow) => {
    const micros = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
    let busy = 0;
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      at += us;
      if (!inWindow(at)) return;
      const category = nodeCategory(id);
      if (category === null) return;
      const share = countShare.get(id) ?? 0;
      micros[category] += us * (1 - share);
      micros.count += us * share;
      busy += us;
    });
    return { micros, busy };
  };
  let windowed = window !== undefined;
  let counted = windowed ? count((t) => t >= window.startUs && t <= window.endUs) : undefined;
  if (!counted || counted.busy === 0) {
    windowed = false;
    counted = count(() => true);
  }
  return { file, busyMs: counted.busy / 1000, micros: counted.micros, windowed };
}

/**
 * With BENCH_CPU_PROF set: prints (and returns) Canon profile `profileName`'s split; with `cpuMicrosPerRequest`
 * (the server CPU per request of the same run, the profiler's overhead included) also µs per request per
 * category; `window`: the measured run's (measureScript's result), see splitProfile.
 */
export function reportSplit(profileName, { title = profileName, cpuMicrosPerRequest, window } = {}) {
  if (!settings.cpuProfileDir) return undefined;
  const file = profileFileOf(profileName);
  if (!existsSync(file)) {
    console.warn(`bench: WARNING no CPU profile at ${file} (did Canon exit cleanly?)`);
    return undefined;
  }
  const split = splitProfile(file, window);
  const shares = Object.entries(split.micros)
    .filter(([, us]) => us > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([category, us]) => ({
      category,
      share: us / (split.busyMs * 1000),
      ...(cpuMicrosPerRequest ? { microsPerRequest: (us / (split.busyMs * 1000)) * cpuMicrosPerRequest } : {}),
    }));
  const scope = split.windowed ? 'the measured run' : 'the WHOLE process, start-up included (no sample in the measured window)';
  console.log(`bench: CPU split ${title} (${path.basename(file)}, ${Math.round(split.busyMs)} ms busy in ${scope}):`);
  console.log(`  ${shares.map((s) => `${s.category} ${fmt(s.share * 100, 1)}%${s.microsPerRequest !== undefined ? ` (${fmt(s.microsPerRequest, 1)} µs)` : ''}`).join(' | ')}`);
  return { file: split.file, busyMs: split.busyMs, windowed: split.windowed, shares };
}
