// Chooses the store adapter from DATABASE_URL; the only module that knows which backends exist.
import { PgStore } from '../store/postgres/pg-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
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
}

export function openStore(url: string, options: StoreOptions = {}): StoreTarget {
  const poolSize = options.poolSize ?? 10;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new Error('DATABASE_URL "sqlite:" needs a path, such as sqlite:./data/canon.db or sqlite::memory:');
    const memory = path === ':memory:';
    return { store: new SqliteStore({ path, synchronous: options.sqliteSynchronous ?? 'full' }), file: memory ? undefined : path };
  }
  if (/^postgres(ql)?:\/\//.test(url))
    return { store: new PgStore({ connectionString: url, max: poolSize, preparedStatements: options.pgPreparedStatements ?? true }), file: undefined };
  throw new Error(`DATABASE_URL "${url}" is not understood; use sqlite:<path>, sqlite::memory: or postgres://…`);
}
