// The PostgreSQL dialect: IS [NOT] DISTINCT FROM, explicit null ordering to match SQLite, tsvector searches.
import type { CompiledResource } from '../../model/compile.js';
import { RANK_COLUMN, quote, type Dialect, type Sql } from '../sql/queries.js';
import { SEARCH_COLUMN } from './ddl.js';
import { columnList } from './rows.js';
import { tsquery } from './search.js';

export const pgDialect: Dialect = {
  same: 'IS NOT DISTINCT FROM',
  differs: 'IS DISTINCT FROM',
  // PostgreSQL puts nulls last ascending by default; the store contract says first (as SQLite does).
  // Only nullable columns say so: a column without nulls keeps the default, which its index serves.
  nulls: (desc, nullable) => (!nullable ? '' : desc ? ' NULLS LAST' : ' NULLS FIRST'),
  rowValues: true,
  value: (v) => v,
  columns: columnList,
  rowKey: 'id',
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  // One array parameter, typed by the column (https://www.postgresql.org/docs/current/functions-comparisons.html#FUNCTIONS-COMPARISONS-ANY-SOME);
  // an index on the column serves it as it serves IN (…).
  oneOf: (col) => `${col} = ANY(?)`,
  list: (values) => [...values],
  // The B-tree keeps the tighter of two bounds on one column by itself: nothing to do.
  residual: (col) => col,
  searchSource(r: CompiledResource, text: string): Sql | undefined {
    const query = tsquery(text);
    if (query === undefined) return undefined;
    const cols = columnList(r)
      .split(', ')
      .map((c) => `t.${c}`)
      .join(', ');
    // ts_rank grows with relevance; negated so that, as on SQLite, a lower rank is a better match.
    return {
      text: `(SELECT ${cols}, -ts_rank(t.${SEARCH_COLUMN}, q.query) AS ${RANK_COLUMN} FROM ${quote(r.table)} AS t, to_tsquery('simple', ?) AS q(query) WHERE t.${SEARCH_COLUMN} @@ q.query) AS s`,
      params: [query],
    };
  },
};

/** Turns the builder's `?` placeholders into PostgreSQL's `$1, $2, …` (the builder never puts `?` in literals). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
