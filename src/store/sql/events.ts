// The event log's reads and retention (`?` placeholders), shared by SQLite and PostgreSQL: filters by owner, resource and type pattern.
import type { EventFilter, EventRecord } from '../types.js';
import type { Sql } from './queries.js';

/**
 * A type pattern (`order.*`, `*.deleted`, `order_item.created`) as a LIKE pattern: `*` matches any run of
 * characters; `%`, `_` and the escape character itself are taken literally (`order_item` has an underscore).
 */
export function likePattern(pattern: string): string {
  return pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}

/**
 * The events after `after` in `sequenceColumn` order that pass `filter`. `sequenceColumn` is the adapter's
 * commit-ordered sequence (SQLite: the rowid, assigned under its single writer; PostgreSQL: the sequence
 * stamped after commit, see src/store/postgres/event-sequencer.ts). Unstamped rows never pass `> ?`.
 */
export function eventPageSql(sequenceColumn: string, columns: string, after: number, limit: number, filter: EventFilter = {}): Sql {
  const where = [`${sequenceColumn} > ?`];
  const params: unknown[] = [after];
  if (filter.ownerId !== undefined) {
    where.push('owner_id = ?');
    params.push(filter.ownerId);
  }
  if (filter.resources) {
    if (filter.resources.length === 0) where.push('1 = 0');
    else {
      where.push(`resource IN (${filter.resources.map(() => '?').join(', ')})`);
      params.push(...filter.resources);
    }
  }
  if (filter.types?.length) {
    where.push(`(${filter.types.map(() => "type LIKE ? ESCAPE '\\'").join(' OR ')})`);
    params.push(...filter.types.map(likePattern));
  }
  params.push(limit);
  return { text: `SELECT ${columns} FROM canon_events WHERE ${where.join(' AND ')} ORDER BY ${sequenceColumn} LIMIT ?`, params };
}

/**
 * Retention: the oldest events created before a moment, a batch at a time (DESIGN §9: kept 30 days); with
 * `boundColumn`, only those at or below a sequence too (the events every webhook endpoint has had dispatched;
 * on PostgreSQL the stamped sequence, which an unstamped event never passes). Parameters: before, [through,] batch.
 */
export function purgeEventsSql(sequenceColumn: string, boundColumn?: string): string {
  const bound = boundColumn ? ` AND ${boundColumn} <= ?` : '';
  return `DELETE FROM canon_events WHERE ${sequenceColumn} IN (SELECT ${sequenceColumn} FROM canon_events WHERE created_at < ?${bound} ORDER BY ${sequenceColumn} LIMIT ?)`;
}

/** The outbox insert both adapters run in the writing transaction; the sequence is the adapter's to give. */
export const INSERT_EVENT =
  'INSERT INTO canon_events (id, type, resource, object_id, owner_id, api_version, created_at, data, previous_attributes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';

export function eventParams(e: EventRecord): unknown[] {
  return [
    e.id,
    e.type,
    e.resource,
    e.object_id,
    e.owner_id,
    e.api_version,
    e.created_at,
    JSON.stringify(e.data),
    e.previous_attributes ? JSON.stringify(e.previous_attributes) : null,
  ];
}
