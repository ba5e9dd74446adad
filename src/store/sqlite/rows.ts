// Maps records (domain values) to SQLite rows and back: money as two columns, string arrays as JSON, booleans as 0/1.
import type { CompiledResource } from '../../model/compile.js';
import type { StoredRecord } from '../types.js';

export type Row = Record<string, unknown>;

export function toRow(resource: CompiledResource, record: StoredRecord): Row {
  const row: Row = { id: record.id, version: record.version, created_at: record.created_at, updated_at: record.updated_at };
  for (const [name, field] of resource.stored) {
    const value = record[name];
    if (field.type === 'money') {
      const money = value as { amount: number; currency: string } | null | undefined;
      row[`${name}_amount`] = money ? money.amount : null;
      row[`${name}_currency`] = money ? money.currency : null;
    } else if (field.type === 'string[]') {
      row[name] = value === null || value === undefined ? null : JSON.stringify(value);
    } else if (field.type === 'boolean') {
      row[name] = value === null || value === undefined ? null : value ? 1 : 0;
    } else {
      row[name] = value ?? null;
    }
  }
  return row;
}

export function fromRow(resource: CompiledResource, row: Row): StoredRecord {
  const record: StoredRecord = {
    id: row.id as string,
    version: row.version as number,
    created_at: row.created_at as string,
    updated_at: row.updated_at as string,
  };
  for (const [name, field] of resource.stored) {
    if (field.type === 'money') {
      const amount = row[`${name}_amount`];
      record[name] = amount === null || amount === undefined ? null : { amount: Number(amount), currency: row[`${name}_currency`] };
    } else if (field.type === 'string[]') {
      const raw = row[name];
      record[name] = typeof raw === 'string' ? JSON.parse(raw) : null;
    } else if (field.type === 'boolean') {
      const raw = row[name];
      record[name] = raw === null || raw === undefined ? null : raw === 1;
    } else {
      record[name] = row[name] ?? null;
    }
  }
  return record;
}
