// Persisted queries (Apollo's `extensions.persistedQuery`): the queries an operator registered by configuration, by their SHA-256, so clients may send the hash alone.
import { createHash } from 'node:crypto';

/** The lowercase hex SHA-256 of a query's text, as Apollo's clients compute `sha256Hash`. */
export function queryHash(query: string): string {
  return createHash('sha256').update(query, 'utf8').digest('hex');
}

export class PersistedQueries {
  private readonly byHash = new Map<string, string>();

  /**
   * `entries`: the registered queries, as `{ "<sha256>": "<query>" }` or as a list of queries (hashes computed).
   * A hash that is not its query's is a configuration error, found at start rather than answered wrong.
   */
  constructor(entries: Record<string, string> | readonly string[] = []) {
    const pairs: Array<[string, string]> = Array.isArray(entries) ? entries.map((q: string) => [queryHash(q), q]) : Object.entries(entries);
    for (const [hash, query] of pairs) {
      if (typeof query !== 'string') throw new Error(`persisted query ${hash}: the query must be text`);
      if (queryHash(query) !== hash.toLowerCase()) throw new Error(`persisted query ${hash}: the hash is not the SHA-256 of its query (it is ${queryHash(query)})`);
      this.byHash.set(hash.toLowerCase(), query);
    }
  }

  get size(): number {
    return this.byHash.size;
  }

  get(hash: string): string | undefined {
    return this.byHash.get(hash.toLowerCase());
  }
}
