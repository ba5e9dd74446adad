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
    if (typeof v === 'string' && (/email/i.test(k) || /^[^@\s]+@[^@\s]+$/.test(v))) out[k] = `canon-check-${tag}@example.com`;
    else if (typeof v === 'string' && /^(name|title|full_name|fullName|display_name|label)$/.test(k)) out[k] = `${v} (canon check ${tag})`;
    else out[k] = v;
  }
  return out;
}

export function templateOf(item: unknown): Record<string, unknown> | undefined {
  if (!isObject(item)) return undefined;
  return Object.fromEntries(Object.entries(item).filter(([k]) => !SERVER_FIELDS.test(k)));
}

/** The created object's URL: Location, else its self link, else the collection URL plus its id. */
export function createdUrl(ctx: Context, c: Collection, x: Exchange): URL | undefined {
  if (x.headers.location) return ctx.probe.follow(x.headers.location, x.url);
  const self = bodyLinks(x.json).find((l) => l.rel === 'self');
  if (self) return ctx.probe.follow(self.href, x.url);
  if (isObject(x.json) && (typeof x.json.id === 'string' || typeof x.json.id === 'number'))
    return new URL(`${c.url.href.replace(/\/+$/, '')}/${encodeURIComponent(String(x.json.id))}`);
  return undefined;
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
  const url = x.status >= 200 && x.status < 300 ? createdUrl(ctx, c, x) : undefined;
  if (url && !ctx.created.some((k) => k.url.href === url.href)) ctx.created.push({ url, note });
  if (x.status >= 200 && x.status < 300 && !url) ctx.cleanup.push(seen(x, 'created something the checker cannot locate (no Location, self link or id): not deleted'));
  return { x, url };
}

/** DELETE what the checker created; the answer goes to the cleanup log. A second delete of the same URL is skipped. */
export async function remove(ctx: Context, url: URL): Promise<Exchange | undefined> {
  const i = ctx.created.findIndex((k) => k.url.href === url.href);
  if (i < 0) return undefined;
  const [entry] = ctx.created.splice(i, 1);
  try {
    const x = await ctx.probe.send('DELETE', url, { cleanup: true });
    ctx.cleanup.push(seen(x, `${entry!.note}; ${x.status < 300 || x.status === 404 || x.status === 410 ? 'deleted' : 'NOT deleted'}`));
    return x;
  } catch (err) {
    ctx.cleanup.push({ request: `DELETE ${url.pathname}`, note: `${entry!.note}; NOT deleted: ${err instanceof Error ? err.message : String(err)}` });
    return undefined;
  }
}

/** The first collection (of at most three) where a body copied from an item creates an object; the try is deleted again. */
export function writable(ctx: Context): Promise<{ found: Writable | undefined; evidence: Evidence[] }> {
  return ctx.once('writable', async () => {
    const evidence: Evidence[] = [];
    for (const c of ctx.collections.filter((k) => k.item).slice(0, MAX_CREATE_TRIES)) {
      const item = await samples.item(ctx, c);
      const template = item?.status === 200 ? templateOf(item.json) : undefined;
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
