// Chooses the store adapter from DATABASE_URL; the only module that knows which backends exist.
import type { Store } from '../store/types.js';

export interface StoreTarget {
  store: Store;
  /** The SQLite file, when there is one: development secrets are kept beside it. */
  file: string | undefined;
}

export interface StoreOptions {
  /** PostgreSQL connections per process. */
  poolSize?: number;
  /** SQLite: `full` (durable through power loss, the default) or `normal` (may lose the last commits then). */
  sqliteSynchronous?: 'full' | 'normal';
  /** PostgreSQL: name the most used statements, prepared once per connection (default true). */
  pgPreparedStatements?: boolean;
  /** Keep small list pages and offset counts until the next commit (default true; src/store/list-cache.ts). */
  listCache?: boolean;
}

/**
 * Each adapter is imported when a URL asks for it, never at start: a process loads the driver it uses and not
 * the other (pg and its protocol modules cost a SQLite process about a tenth of a second of CPU at every start,
 * and the test suite starts hundreds of processes; docs/architecture.md, "What a process loads").
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<StoreTarget> {
  const poolSize = options.poolSize ?? 10;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new Error('DATABASE_URL "sqlite:" needs a path, such as sqlite:./data/canon.db or sqlite::memory:');
    const memory = path === ':memory:';
    const { SqliteStore } = await import('../store/sqlite/sqlite-store.js');
    return { store: new SqliteStore({ path, synchronous: options.sqliteSynchronous ?? 'full', listCache: options.listCache ?? true }), file: memory ? undefined : path };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { PgStore } = await import('../store/postgres/pg-store.js');
    return {
      store: new PgStore({ connectionString: url, max: poolSize, preparedStatements: options.pgPreparedStatements ?? true, listCache: options.listCache ?? true }),
      file: undefined,
    };
  }
  throw new Error(`DATABASE_URL "${url}" is not understood; use sqlite:<path>, sqlite::memory: or postgres://…`);
}
