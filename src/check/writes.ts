// Writing with --write: a create body copied from an existing item, the created object's URL, and deleting it again.
import { randomUUID } from 'node:crypto';
import type { Collection, Context } from './context.js';
import { bodyLinks } from './links.js';
import { samples } from './samples.js';
import type { Evidence, Exchange, Verdict } from './types.js';
import { isObject, notApplicable, seen } from './verdict.js';

/** Fields a client never sends: identity, timestamps, links, versions (a server answers them with 422 or ignores them). */
const SERVER_FIELDS = /^(id|_?links|_embedded|url|href|self|etag|version|created_at|updated_at|createdAt|updatedAt|.*_at)$/;
/** How many collections the checker tries before it gives up finding one it can create in. */
const MAX_CREATE_TRIES = 3;

export interface Writable {
  collection: Collection;
  /** A body the collection accepted; `variant()` makes a fresh one from it (unique e-mail, name). */
  template: Record<string, unknown>;
}

/** A create body from an item: server fields dropped; e-mails and names made unique so unique constraints hold. */
export function variant(template: Record<string, unknown>): Record<string, unknown> {
  const tag = randomUUID().slice(0, 8);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(template)) {
    if (typeof v === 'string' && v.startsWith(FRESH_ID_MARK)) out[k] = v.endsWith('uuid') ? randomUUID() : `canon-check-${randomUUID()}`;
    else if (typeof v === 'string' && (/email/i.test(k) || /^[^@\s]+@[^@\s]+$/.test(v))) out[k] = `canon-check-${tag}@example.com`;
    else if (typeof v === 'string' && /^(name|title|full_name|fullName|display_name|label)$/.test(k)) out[k] = `${v} (canon check ${tag})`;
    else out[k] = v;
  }
  return out;
}

/**
 * A create body from an item: its fields without those the server sets, and without the key item paths use (`rid`),
 * unless an OpenAPI document requires them (then `id` gets a fresh value of the same form: a client-chosen id).
 */
export function templateOf(item: unknown, idField = 'id', required: string[] = []): Record<string, unknown> | undefined {
  if (!isObject(item)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) {
    if (required.includes(k)) out[k] = k === 'id' || k === idField ? freshId(v) : v;
    else if (!SERVER_FIELDS.test(k) && k !== idField) out[k] = v;
  }
  return out;
}

/** A new identifier shaped like `v`: a UUID for a UUID, a string otherwise; numbers are left to the server. */
function freshId(v: unknown): unknown {
  if (typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) return `${FRESH_ID_MARK}uuid`;
  if (typeof v === 'string') return `${FRESH_ID_MARK}string`;
  return v;
}

/** Template values that variant() replaces with a new id on each create. */
const FRESH_ID_MARK = '\u0000canon-check-fresh-id:';

/**
 * Where the created object may be, best first: its Location, its self link, the collection URL plus its key (the
 * document's item key, then `id`). A server's Location can be wrong (the object lives elsewhere): deleting tries each.
 */
export function createdUrls(ctx: Context, c: Collection, x: Exchange): URL[] {
  const urls: Array<URL | undefined> = [];
  if (x.headers.location) urls.push(ctx.probe.follow(x.headers.location, x.url));
  const self = bodyLinks(x.json).find((l) => l.rel === 'self');
  if (self) urls.push(ctx.probe.follow(self.href, x.url));
  for (const key of [c.idField, 'id']) {
    const id = isObject(x.json) ? x.json[key] : undefined;
    if (typeof id === 'string' || typeof id === 'number') urls.push(new URL(`${c.url.href.replace(/\/+$/, '')}/${encodeURIComponent(String(id))}`));
  }
  const out: URL[] = [];
  for (const u of urls) if (u && !out.some((o) => o.href === u.href)) out.push(u);
  return out;
}

/** Records a 2xx answer's object for deletion; returns its URL (undefined, and a cleanup note, when it cannot be found). */
export function track(ctx: Context, c: Collection, x: Exchange, note: string): URL | undefined {
  if (x.status < 200 || x.status >= 300) return undefined;
  const [url, ...alternates] = createdUrls(ctx, c, x);
  if (!url) {
    ctx.cleanup.push(seen(x, `${note}: created something the checker cannot locate (no Location, self link or id): not deleted`));
    return undefined;
  }
  if (!ctx.created.some((k) => k.url.href === url.href)) ctx.created.push({ url, alternates, note });
  return url;
}

/** POST a body as JSON; a 2xx is recorded for deletion at once, so that nothing is left behind whatever follows. */
export async function create(
  ctx: Context,
  c: Collection,
  body: unknown,
  headers: Record<string, string> = {},
  note = 'created',
  paced = true,
): Promise<{ x: Exchange; url: URL | undefined }> {
  const x = await ctx.probe.send('POST', c.url, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), paced });
  return { x, url: track(ctx, c, x, note) };
}

/** Forgets a tracked object (a rule deleted it itself). */
export function untrack(ctx: Context, url: URL): void {
  const i = ctx.created.findIndex((k) => k.url.href === url.href);
  if (i >= 0) ctx.created.splice(i, 1);
}

/**
 * DELETE what the checker created, at its URL and then at each alternate until one answers 2xx; every answer goes to
 * the cleanup log. Returns the first answer. A second delete of the same URL is skipped.
 */
export async function remove(ctx: Context, url: URL): Promise<Exchange | undefined> {
  const i = ctx.created.findIndex((k) => k.url.href === url.href);
  if (i < 0) return undefined;
  const [entry] = ctx.created.splice(i, 1);
  let first: Exchange | undefined;
  let gone = false;
  for (const target of [entry!.url, ...entry!.alternates]) {
    try {
      const x = await ctx.probe.send('DELETE', target, { cleanup: true });
      first ??= x;
      const deleted = x.status >= 200 && x.status < 300;
      gone ||= x.status === 404 || x.status === 410;
      ctx.cleanup.push(seen(x, `${entry!.note}; ${deleted ? 'deleted' : x.status === 404 || x.status === 410 ? 'not there' : 'not deleted at this URL, trying the next'}`));
      if (deleted) return first;
    } catch (err) {
      ctx.cleanup.push({ request: `DELETE ${target.pathname}`, note: `${entry!.note}; NOT deleted: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  if (!gone) ctx.cleanup.push({ request: `DELETE ${entry!.url.pathname}`, note: `${entry!.note}: LEFT BEHIND, delete it by hand` });
  return first;
}

/** The first collection (of at most three) where a body copied from an item creates an object; the try is deleted again. */
export function writable(ctx: Context): Promise<{ found: Writable | undefined; evidence: Evidence[] }> {
  return ctx.once('writable', async () => {
    const evidence: Evidence[] = [];
    for (const c of ctx.collections.filter((k) => k.item).slice(0, MAX_CREATE_TRIES)) {
      const item = await samples.item(ctx, c);
      const template = item?.status === 200 ? templateOf(item.json, c.idField, c.createRequired) : undefined;
      if (!template) continue;
      const { x, url } = await create(ctx, c, variant(template), {}, 'a copy of an item, to learn what the collection accepts');
      evidence.push(seen(x, `a copy of ${c.item!.pathname} without its server fields`));
      if (url) await remove(ctx, url);
      if (x.status >= 200 && x.status < 300) return { found: { collection: c, template }, evidence };
    }
    return { found: undefined, evidence };
  });
}

/** Runs `fn` on the writable collection, or answers not-applicable with the tries as evidence. */
export async function onWritable(ctx: Context, fn: (w: Writable) => Promise<Verdict>): Promise<Verdict> {
  if (ctx.collections.length === 0 && ctx.trouble) return { status: 'error', summary: `discovery failed: ${ctx.trouble}`, evidence: [] };
  const { found, evidence } = await writable(ctx);
  if (!found) return notApplicable('no collection accepted a copy of one of its items, so nothing could be created', evidence);
  return fn(found);
}
