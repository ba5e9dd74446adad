// The rows a background worker claims once due (webhook deliveries, asynchronous operations): one status, due at or before now, oldest first.
import type { ListQuery, Reader } from './types.js';

/** Up to `limit` rows of `status` whose `next_attempt_at` has come, oldest first (ties by id). */
export function dueQuery(status: string, now: Date, limit: number): ListQuery {
  return {
    where: [
      { path: 'status', op: 'eq', value: status },
      { path: 'next_attempt_at', op: 'lte', value: now.toISOString() },
    ],
    orderBy: [
      { path: 'next_attempt_at', desc: false },
      { path: 'id', desc: false },
    ],
    limit,
  };
}

/**
 * Whether any row of `query` is due, read outside any transaction: a worker's idle poll then opens none. A claiming
 * transaction takes SQLite's one write lock, and on PostgreSQL a lock's transaction id moves the snapshot every
 * process's caches are stamped with.
 */
export async function anyDue(reader: Reader, resource: string, query: ListQuery): Promise<boolean> {
  return (await reader.list(resource, { ...query, limit: 1 })).rows.length > 0;
}
