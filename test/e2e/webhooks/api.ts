// Helpers for the webhook end-to-end tests: an admin HTTP client for a Canon process, a scratch store per run (SQLite file or PostgreSQL database), paging.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY } from '../../support/harness.js';
import { createTestDatabase, PG_URL } from '../../support/pg.js';

export type Json = Record<string, any>;

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

/** One request to a Canon process, as the admin unless `key` says otherwise; bounded by a 10 s timeout. */
export async function call(base: string, method: string, path: string, body?: unknown, key: string = ADMIN_KEY): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed: Json = {};
  try {
    parsed = text ? (JSON.parse(text) as Json) : {};
  } catch {
    // not JSON (/metrics)
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** Every item of a cursor-paginated list, following next_cursor (at most `pages` pages). */
export async function all(base: string, path: string, pages = 50): Promise<Json[]> {
  const out: Json[] = [];
  const sep = path.includes('?') ? '&' : '?';
  let next = path;
  for (let i = 0; i < pages; i++) {
    const res = await call(base, 'GET', next);
    if (res.status !== 200) throw new Error(`GET ${next}: ${res.status} ${res.text}`);
    out.push(...(res.body.data as Json[]));
    if (!res.body.pagination.has_more) return out;
    next = `${path}${sep}cursor=${encodeURIComponent(res.body.pagination.next_cursor as string)}`;
  }
  throw new Error(`more than ${pages} pages at ${path}`);
}

export type StoreKind = 'sqlite' | 'postgres';
/** Every suite runs on SQLite, and on PostgreSQL too when CANON_TEST_DATABASE_URL is set. */
export const STORES: StoreKind[] = ['sqlite', ...(PG_URL ? (['postgres'] as const) : [])];

export interface Scratch {
  databaseUrl: string;
  remove(): Promise<void>;
}

/** A fresh database: a SQLite file in a temp directory, or a PostgreSQL database of its own. */
export async function scratchStore(kind: StoreKind): Promise<Scratch> {
  if (kind === 'postgres') {
    const db = await createTestDatabase();
    return { databaseUrl: db.url, remove: () => db.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'canon-webhooks-'));
  return {
    databaseUrl: `sqlite:${join(dir, 'canon.db')}`,
    remove: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs `task` over `items` with at most `width` at once; results in order. */
export async function pool<T, R>(items: T[], width: number, task: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}
