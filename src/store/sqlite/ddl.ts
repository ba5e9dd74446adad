// DDL for SQLite from the compiled model: tables, additive columns, unique and query indexes, the event log.
import type { Column, CompiledResource } from '../../model/compile.js';

export function sqlType(column: Column): string {
  return column.type === 'integer' || column.type === 'boolean' ? 'INTEGER' : 'TEXT';
}

export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function createTable(resource: CompiledResource): string {
  const cols = resource.columns.map((c) => `${quote(c.name)} ${sqlType(c)}`);
  return `CREATE TABLE IF NOT EXISTS ${quote(resource.table)} (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL${cols.length ? ', ' + cols.join(', ') : ''})`;
}

export function addColumn(resource: CompiledResource, column: Column): string {
  return `ALTER TABLE ${quote(resource.table)} ADD COLUMN ${quote(column.name)} ${sqlType(column)}`;
}

/** Unique indexes, and one (column, id) index per filterable or sortable path so keyset pages stay cheap. */
export function indexes(resource: CompiledResource): string[] {
  const t = resource.table;
  const out: string[] = [];
  for (const field of resource.uniqueFields) {
    out.push(`CREATE UNIQUE INDEX IF NOT EXISTS ${quote(`ux_${t}_${field}`)} ON ${quote(t)} (${quote(field)})`);
  }
  const seen = new Set<string>(['id']);
  for (const path of resource.paths.values()) {
    if (seen.has(path.column) || (!path.filterable && !path.sortable)) continue;
    seen.add(path.column);
    out.push(`CREATE INDEX IF NOT EXISTS ${quote(`ix_${t}_${path.column}`)} ON ${quote(t)} (${quote(path.column)}, id)`);
  }
  for (const [name, field] of resource.stored) {
    if (field.references && !seen.has(name)) {
      seen.add(name);
      out.push(`CREATE INDEX IF NOT EXISTS ${quote(`ix_${t}_${name}`)} ON ${quote(t)} (${quote(name)}, id)`);
    }
  }
  return out;
}

export const EVENTS_TABLE = `CREATE TABLE IF NOT EXISTS canon_events (
  sequence INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  resource TEXT NOT NULL,
  object_id TEXT NOT NULL,
  owner_id TEXT,
  api_version TEXT NOT NULL,
  created_at TEXT NOT NULL,
  data TEXT NOT NULL,
  previous_attributes TEXT
)`;
