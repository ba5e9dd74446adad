// Preload (`node --import`) for a Canon process without its page cache: every list read goes to the database, with its count, as if each page were new.
//
// Canon has no setting for this (its list cache, src/store/list-cache.ts, is always on), and issue 31 asks for
// one run "with the page cache switched off, to show the path itself"; the benchmarks may not change src/.
// So the benchmark process replaces ListCache#through, the one call both stores make for a shared list
// (src/store/sqlite/sqlite-store.ts, src/store/postgres/pg-store.ts), with a plain read: no kept page, no kept
// count per filter, no offset seek from a known position. The record cache (GET by id) is left alone. The
// module is the very one the server imports (same file URL, one ESM instance), found beside the entry script.
// The first bypassed read prints a marker the harness checks for, so a run whose patch missed is refused.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { NO_PAGE_CACHE_MARKER } from './no-page-cache-marker.mjs';

const entry = process.argv[1];
if (!entry) throw new Error('no-page-cache: no entry script to find the build from');
const { ListCache } = await import(pathToFileURL(path.join(path.dirname(entry), '../store/list-cache.js')).href);
if (typeof ListCache?.prototype?.through !== 'function') throw new Error('no-page-cache: this build has no ListCache#through to replace');
let announced = false;
ListCache.prototype.through = function through(resource, query, stamp, read) {
  if (!announced) {
    announced = true;
    process.stderr.write(`${NO_PAGE_CACHE_MARKER}\n`);
  }
  return read(query);
};
