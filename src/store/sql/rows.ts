// Maps records to rows and back for SQL adapters: money as two columns, arrays as JSON; a codec covers each engine's types.
import type { CompiledResource } from '../../model/compile.js';
import type { FieldType } from '../../model/types.js';
import type { StoredEvent, StoredRecord } from '../types.js';

export type Row = Record<string, unknown>;

/** How one engine stores the scalar types that differ: booleans, timestamps and JSON. */
export interface Codec {
  encode(type: FieldType, value: unknown): unknown;
  decode(type: FieldType, value: unknown): unknown;
}

export function toRow(r: CompiledResource, record: StoredRecord, codec: Codec): Row {
  const row: Row = { id: record.id, version: record.version, created_at: record.created_at, updated_at: record.updated_at };
  for (const [name, field] of r.stored) {
    const value = record[name];
    if (field.type === 'money') {
      const money = value as { amount: number; currency: string } | null | undefined;
      row[`${name}_amount`] = money ? money.amount : null;
      row[`${name}_currency`] = money ? money.currency : null;
    } else {
      row[name] = value === null || value === undefined ? null : codec.encode(field.type, value);
    }
  }
  return row;
}

export function fromRow(r: CompiledResource, row: Row, codec: Codec): StoredRecord {
  const record: StoredRecord = {
    id: row.id as string,
    version: Number(row.version),
    created_at: codec.decode('timestamp', row.created_at) as string,
    updated_at: codec.decode('timestamp', row.updated_at) as string,
  };
  for (const [name, field] of r.stored) {
    record[name] = field.type === 'money' ? fieldValue(field.type, row[`${name}_amount`], row[`${name}_currency`], codec) : fieldValue(field.type, row[name], undefined, codec);
  }
  return record;
}

/** One stored field's value from its column (money: its amount and currency columns); null for a missing one. */
function fieldValue(type: FieldType, raw: unknown, currency: unknown, codec: Codec): unknown {
  if (raw === null || raw === undefined) return null;
  return type === 'money' ? { amount: Number(raw), currency } : codec.decode(type, raw);
}

/**
 * `fromRow` for rows read as arrays (better-sqlite3's raw mode), columns named once per statement: building an
 * object per row in the driver costs about a third of a 20-row page's read, and fromRow built another.
 * Returns the decoder and where `extra` columns (the search rank) sit.
 */
export function arrayRowDecoder(r: CompiledResource, columns: readonly string[], codec: Codec): (values: unknown[]) => StoredRecord {
  const at = new Map(columns.map((name, i) => [name, i]));
  const index = (name: string): number => {
    const i = at.get(name);
    if (i === undefined) throw new Error(`column ${name} of ${r.name} is not in the result`);
    return i;
  };
  const [id, version, created, updated] = [index('id'), index('version'), index('created_at'), index('updated_at')];
  const fields = r.stored.map(([name, field]) =>
    field.type === 'money'
      ? { name, type: field.type, money: true, i: index(`${name}_amount`), j: index(`${name}_currency`) }
      : { name, type: field.type, money: false, i: index(name), j: -1 },
  );
  return (values) => {
    const record: StoredRecord = {
      id: values[id] as string,
      version: Number(values[version]),
      created_at: codec.decode('timestamp', values[created]) as string,
      updated_at: codec.decode('timestamp', values[updated]) as string,
    };
    for (const f of fields) record[f.name] = fieldValue(f.type, values[f.i], f.j < 0 ? undefined : values[f.j], codec);
    return record;
  };
}

/** The event log row shape shared by the adapters (JSON columns and timestamps through the codec). */
export function eventFromRow(row: Row, codec: Codec): StoredEvent {
  const prev = row.previous_attributes;
  return {
    sequence: Number(row.sequence),
    id: row.id as string,
    type: row.type as string,
    resource: row.resource as string,
    object_id: row.object_id as string,
    owner_id: (row.owner_id as string | null) ?? null,
    api_version: row.api_version as string,
    created_at: codec.decode('timestamp', row.created_at) as string,
    data: codec.decode('object', row.data) as Record<string, unknown>,
    previous_attributes: prev === null || prev === undefined ? undefined : (codec.decode('object', prev) as Record<string, unknown>),
  };
}
