// Products as stored rows, and id-ordered pages of them, for the store tests of kept list rows (SQLite and PostgreSQL).
import type { ListQuery, StoredRecord } from '../../src/store/types.js';

/** The id of product `i`: UUIDs in the order of `i`. */
export const rowId = (i: number): string => `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;

/** Product `i` of the commerce model as the store holds it, version 1, with `over` replacing fields. */
export function productRow(i: number, over: Partial<StoredRecord> = {}): StoredRecord {
  return {
    id: rowId(i),
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    name: `p${i}`,
    description: null,
    price: { amount: 100 + i, currency: 'EUR' },
    status: 'active',
    tags: ['t'],
    ...over,
  };
}

/** Five rows in id order from `offset`, with `extra` replacing parts of the query. */
export const idPage = (offset: number, extra: Partial<ListQuery> = {}): ListQuery => ({ where: [], orderBy: [{ path: 'id', desc: false }], limit: 5, offset, ...extra });
