// Keeps every better-sqlite3 database and statement reachable until this module lets it go inside a collection it runs itself, so no other garbage collection ever destroys one.
//
// Node 24.19 and later compile an environment cleanup hook into every node::ObjectWrap (better-sqlite3's
// Database, Statement and StatementIterator are ObjectWraps); destroying one from a V8 weak callback, where no
// context is entered, aborts the whole process ("Assertion failed: (env) != nullptr" in
// RemoveEnvironmentCleanupHook, nodejs/node#65446). An object that is never garbage is never destroyed that way:
// Node deletes the survivors itself when the environment is torn down, with the environment still current.
// Databases stay pinned for the life of the process (a server opens one store). Statements are pinned too,
// but a statement cache is bounded (src/store/sqlite/statement-cache.ts) and what it evicts is released here:
// see `release`.
import Database from 'better-sqlite3';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const retained = new Set<object>();

/**
 * BETTER_SQLITE3_NATIVE_BINDING: the better-sqlite3 binary (`better_sqlite3.node`) to load instead of the installed
 * package's, one built for another Node version than the one `npm install` ran on (CI's Node 24 suite, .ci/run,
 * which leaves the checkout's own binding to Node 20). Read from the environment, not the configuration: every
 * database of the process, tests' own included, opens here; and not named CANON_*, which tests strip to start a
 * user's clean environment, since it describes the machine, not the deployment.
 */
const NATIVE_BINDING = process.env.BETTER_SQLITE3_NATIVE_BINDING || undefined;

/** Opens a database that stays reachable for the life of the process. */
export function openDatabase(path: string, options?: Database.Options): Database.Database {
  const db = new Database(path, NATIVE_BINDING === undefined ? options : { ...options, nativeBinding: NATIVE_BINDING });
  retained.add(db);
  return db;
}

/** Prepares a statement that stays reachable until it is retired and released (callers cache it; this only pins it). */
export function prepare(db: Database.Database, sql: string): Database.Statement {
  const statement = db.prepare(sql);
  retained.add(statement);
  return statement;
}

/** How many objects are pinned: for tests. */
export function retainedCount(): number {
  return retained.size;
}

/** A retired statement: held strongly until its release begins, and weakly to tell afterwards whether it was destroyed. */
interface Retired {
  statement: Database.Statement | undefined;
  ref: WeakRef<Database.Statement>;
}

/** Retired statements are released this many at a time: each release costs a full collection. */
export const RELEASE_BATCH = 512;
const retiring: Retired[] = [];
/** Statements retired since the last release (survivors of a release do not count again). */
let fresh = 0;
let scheduled = false;
/** Statements destroyed by releases so far. */
let destroyedTotal = 0;
let collect: (() => void) | null | undefined;

/**
 * A full, synchronous garbage collection started from JavaScript: `gc` of a context where V8 exposes it
 * (--expose-gc, set now when the process was not started with it). Null when it cannot be had, and then
 * nothing is ever released.
 */
function collector(): (() => void) | null {
  if (collect !== undefined) return collect;
  const global = (globalThis as { gc?: unknown }).gc;
  try {
    if (typeof global !== 'function') setFlagsFromString('--expose-gc');
    const gc: unknown = typeof global === 'function' ? global : runInNewContext('gc');
    collect = typeof gc === 'function' ? () => void (gc as () => void)() : null;
  } catch {
    collect = null;
  }
  return collect;
}

/**
 * Hands a statement no cache holds any more over to be released. It stays pinned until then: a release runs
 * in a later turn of the event loop once RELEASE_BATCH statements wait, never inside a caller's synchronous use.
 */
export function retire(statement: Database.Statement): void {
  retiring.push({ statement, ref: new WeakRef(statement) });
  fresh++;
  if (fresh >= RELEASE_BATCH && !scheduled) {
    scheduled = true;
    setImmediate(release).unref();
  }
}

/**
 * Lets the retired statements go inside a garbage collection this function runs itself, synchronously, from
 * JavaScript: a context is entered there, so a better-sqlite3 destructor finds its environment (the abort above
 * needs a collection with none, such as one V8 starts from a platform task or at teardown). Each is first
 * unpinned, then one full collection runs; the weak reference then tells which were destroyed. One that was not
 * (still referenced somewhere, or marked live by an incremental marking already under way) is pinned again at
 * once and retried at the next release, so no statement is ever left unpinned for a collection outside this
 * function. A full collection pauses the process (a few hundred milliseconds at most on a heap of 100 MB on
 * this project's machines, docs/BENCHMARKS.md), which is why statements go in batches. Returns how many were
 * destroyed.
 */
export function release(): number {
  scheduled = false;
  fresh = 0;
  const gc = collector();
  if (gc === null || retiring.length === 0) return 0;
  const batch = retiring.splice(0);
  for (const r of batch) {
    retained.delete(r.statement!);
    r.statement = undefined;
  }
  gc();
  let destroyed = 0;
  for (const r of batch) {
    const survivor = r.ref.deref();
    if (survivor === undefined) {
      destroyed++;
    } else {
      retained.add(survivor);
      retiring.push({ statement: survivor, ref: r.ref });
    }
  }
  destroyedTotal += destroyed;
  return destroyed;
}

/** Statements retired and not yet released: for tests. */
export function retiringCount(): number {
  return retiring.length;
}

/** Statements released (destroyed) so far: for tests. */
export function releasedCount(): number {
  return destroyedTotal;
}
