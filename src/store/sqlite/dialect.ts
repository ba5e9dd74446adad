// The SQLite dialect: IS / IS NOT for null-safe comparison, default null ordering, booleans as 0/1, FTS5 searches.
import type { CompiledResource } from '../../model/compile.js';
import { RANK_COLUMN, quote, type Dialect, type Sql } from '../sql/queries.js';
import { ftsTable } from './ddl.js';
import { bm25Weights, matchExpression } from './search.js';

function sqliteValue(v: unknown): unknown {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

export const sqliteDialect: Dialect = {
  same: 'IS',
  differs: 'IS NOT',
  // SQLite already sorts nulls first ascending and last descending; an explicit clause could cost the index.
  nulls: () => '',
  rowValues: true,
  value: sqliteValue,
  columns: () => '*',
  rowKey: 'rid',
  // One writer at a time: a transaction never meets a row another one holds.
  skipLocked: '',
  // The list as one JSON array (https://sqlite.org/json1.html#jeach); IN compares with the column's affinity,
  // as it does with a list of parameters, and the planner still looks each value up in the column's index.
  oneOf: (col) => `${col} IN (SELECT value FROM json_each(?))`,
  list: (values) => JSON.stringify(values.map(sqliteValue)),
  // A unary plus makes the term no index's bound (https://sqlite.org/optoverview.html#disqualifying_where_clause_terms_using_unary_)
  residual: (col) => `+${col}`,
  searchSource(resource: CompiledResource, text: string): Sql | undefined {
    const match = matchExpression(text);
    if (match === undefined) return undefined;
    const table = quote(resource.table);
    const fts = quote(ftsTable(resource));
    return {
      text: `(SELECT t.*, bm25(${fts}, ${bm25Weights(resource.searchable.length)}) AS ${RANK_COLUMN} FROM ${table} AS t JOIN ${fts} ON ${fts}.rowid = t.rid WHERE ${fts} MATCH ?) AS s`,
      params: [match],
    };
  },
};
