// Loads the persisted GraphQL queries an operator registered (CANON_GRAPHQL_PERSISTED_QUERIES): a JSON file, read once at start.
import { readFileSync } from 'node:fs';
import { PersistedQueries } from '../graphql/persisted.js';

/** The queries of the file at `path` (none without one); a file that cannot be read or checked stops the process at start. */
export function persistedQueries(path: string | undefined): PersistedQueries {
  if (path === undefined) return new PersistedQueries();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`CANON_GRAPHQL_PERSISTED_QUERIES ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const valid = Array.isArray(parsed) ? parsed.every((q) => typeof q === 'string') : typeof parsed === 'object' && parsed !== null;
  if (!valid) throw new Error(`CANON_GRAPHQL_PERSISTED_QUERIES ${path}: expected {"<sha256>": "<query>", …} or a list of queries`);
  try {
    return new PersistedQueries(parsed as Record<string, string> | string[]);
  } catch (err) {
    throw new Error(`CANON_GRAPHQL_PERSISTED_QUERIES ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
