// Maps records to PostgreSQL column values and back: money as two columns, string arrays as jsonb, timestamps as ISO strings.
import type { CompiledResource } from '../../model/compile.js';
import type { StoredRecord } from '../types.js';

export type Row = Record<string, unknown>;

function iso(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

export function toRow(r: CompiledResource, record: StoredRecord): Row {
  const row: Row = { id: record.id, version: record.version, created_at: record.created_at, updated_at: record.updated_at };
  for (const [name, field] of r.stored) {
    const value = record[name];
    if (field.type === 'money') {
      const money = value as { amount: number; currency: string } | null | undefined;
      row[`${name}_amount`] = money ? money.amount : null;
      row[`${name}_currency`] = money ? money.currency : null;
    } else if (field.type === 'string[]') {
      row[name] = value === null || value === undefined ? null : JSON.stringify(value);
    } else {
      row[name] = value ?? null;
    }
  }
  return row;
}

export function fromRow(r: CompiledResource, row: Row): StoredRecord {
  const record: StoredRecord = {
    id: row.id as string,
    version: row.version as number,
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
  for (const [name, field] of r.stored) {
    if (field.type === 'money') {
      const amount = row[`${name}_amount`];
      record[name] = amount === null || amount === undefined ? null : { amount: Number(amount), currency: row[`${name}_currency`] };
    } else {
      record[name] = iso(row[name] ?? null);
    }
  }
  return record;
}

/** The select list of a table without the internal search column. */
export function columnList(r: CompiledResource): string {
  return ['id', 'version', 'created_at', 'updated_at', ...r.columns.map((c) => c.name)].map((c) => `"${c}"`).join(', ');
}
