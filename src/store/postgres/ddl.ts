// DDL for PostgreSQL from the compiled model: typed columns, a weighted tsvector for search, unique and query indexes.
import type { Column, CompiledResource } from '../../model/compile.js';
import { quote } from '../sql/queries.js';

export const SEARCH_COLUMN = '_search';

const TYPES: Record<Column['type'], string> = {
  string: 'text',
  enum: 'text',
  uuid: 'uuid',
  integer: 'bigint',
  boolean: 'boolean',
  timestamp: 'timestamptz',
  json: 'jsonb',
};

export function pgType(column: Column): string {
  return TYPES[column.type];
}

/** The most bind parameters one statement may carry (the protocol counts them in 16 bits). */
export const MAX_PARAMETERS = 65_535;

/** Every column of a resource's table, the fixed ones included, with its SQL type: for casts in VALUES lists (built once per resource). */
const typesCache = new WeakMap<CompiledResource, Map<string, string>>();

export function columnTypes(r: CompiledResource): Map<string, string> {
  const cached = typesCache.get(r);
  if (cached) return cached;
  const types = new Map([
    ['id', 'uuid'],
    ['version', 'integer'],
    ['created_at', 'timestamptz'],
    ['updated_at', 'timestamptz'],
  ]);
  for (const c of r.columns) types.set(c.name, pgType(c));
  typesCache.set(r, types);
  return types;
}

export function createTable(r: CompiledResource): string {
  const cols = r.columns.map((c) => `${quote(c.name)} ${pgType(c)}`);
  if (r.searchable.length) cols.push(`${SEARCH_COLUMN} tsvector`);
  return `CREATE TABLE IF NOT EXISTS ${quote(r.table)} (id uuid PRIMARY KEY, version integer NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL${cols.length ? ', ' + cols.join(', ') : ''})`;
}

/** Unique indexes, one (column, id) index per filterable or sortable path, foreign keys, and a GIN index for search. */
export function indexes(r: CompiledResource): string[] {
  const t = r.table;
  const out: string[] = [];
  for (const field of r.uniqueFields) out.push(`CREATE UNIQUE INDEX IF NOT EXISTS ${quote(`ux_${t}_${field}`)} ON ${quote(t)} (${quote(field)})`);
  const seen = new Set<string>(['id']);
  // Nullable columns are indexed NULLS FIRST, the order the store contract sorts them in, so the
  // index serves ascending scans forwards and descending ones backwards.
  const add = (column: string, nullable: boolean): void => {
    if (seen.has(column)) return;
    seen.add(column);
    out.push(`CREATE INDEX IF NOT EXISTS ${quote(`ix_${t}_${column}`)} ON ${quote(t)} (${quote(column)}${nullable ? ' NULLS FIRST' : ''}, id)`);
  };
  for (const path of r.paths.values()) if (path.filterable || path.sortable) add(path.column, path.nullable);
  for (const [name, field] of r.stored) if (field.references) add(name, !field.required);
  for (const [filter, sort] of r.compositeIndexes) {
    const nullable = [...r.paths.values()].find((p) => p.column === sort)?.nullable ?? true;
    out.push(`CREATE INDEX IF NOT EXISTS ${quote(`cx_${t}_${filter}_${sort}`)} ON ${quote(t)} (${quote(filter)}, ${quote(sort)}${nullable ? ' NULLS FIRST' : ''}, id)`);
  }
  if (r.searchable.length) out.push(`CREATE INDEX IF NOT EXISTS ${quote(`gx_${t}_search`)} ON ${quote(t)} USING gin (${SEARCH_COLUMN})`);
  return out;
}

export const EVENTS_TABLE = `CREATE TABLE IF NOT EXISTS canon_events (
  sequence bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  type text NOT NULL,
  resource text NOT NULL,
  object_id uuid NOT NULL,
  owner_id uuid,
  api_version text NOT NULL,
  created_at timestamptz NOT NULL,
  data jsonb NOT NULL,
  previous_attributes jsonb
)`;
