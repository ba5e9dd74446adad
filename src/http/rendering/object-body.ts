// One object's representation as sent: validators and the JSON text, rendered once per immutable record and view.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import type { Loaded } from '../../services/access.js';
import type { StoredRecord } from '../../store/types.js';
import type { Principal } from '../../model/principal.js';
import type { ResourceService } from '../../services/resource-service.js';
import { codedEtag, etagOf, lastModifiedOf, notModified } from './conditional.js';
import type { Coding, Compression } from './compression.js';
import { flatText } from '../../lib/flat-text.js';
import { itemText } from './item-text.js';
import { represent } from './render.js';

export interface ObjectBody {
  etag: string;
  lastModified: string;
  json: string;
}

/**
 * Rendered bodies by record, then by ETag. The ETag already names everything a body depends on besides
 * the record (its version, the API version, and the links this caller may follow), so equal tags on the
 * same record object mean equal text. Only frozen records (the store's read cache hands those out) are
 * memoised: they cannot change, and they are dropped with the record when the cache lets it go. A sparse view's
 * text is kept under its view's key and its ETag (viewKeyOf): one Map per record, as records under churn are many.
 */
const rendered = new WeakMap<StoredRecord, Map<string, string | FirstText>>();

/**
 * A text as rendered, joined into fewer than FLAT_FROM pages so far. Copied flat (flat-text.ts) at the FLAT_FROM-th:
 * the copy costs about what joining it into one or two pages unflattened does (1.5 µs against 1.1 µs for a 330-byte
 * text, measured), so a text joined into a page or two before a write replaces its record (on PostgreSQL every
 * write moves the snapshot the kept rows belong to) is not copied, and one a client pages over again is, once. A GET
 * of the object needs no copy: the text is the whole body there, and V8 flattens a string sent whole where it lies,
 * once.
 */
interface FirstText {
  text: string;
  /** Pages it was joined into. */
  pages: number;
}

const FLAT_FROM = 3;

/**
 * Bounded: a record has few tags (callers' links), but a client could ask for many field sets, and the caches keep
 * up to 20,000 records: 8 texts each bounds what a client can make this hold.
 */
const TEXTS_PER_RECORD = 8;

/**
 * A sparse view's key prefix, `fields` joined and a newline (in no ETag, which a whole text's key is): once per
 * fields array, as a kept plan's (src/query/plan-memo.ts) serves every page it plans, not joined again per item.
 */
const viewKeys = new WeakMap<readonly string[], string>();

function viewKeyOf(fields: readonly string[]): string {
  let key = viewKeys.get(fields);
  if (key === undefined) viewKeys.set(fields, (key = `${fields.join(',')}\n`));
  return key;
}

export function objectBody(version: ApiVersion, r: CompiledResource, loaded: Loaded): ObjectBody {
  const etag = etagOf(loaded.record, loaded.access, version.name);
  return { etag, lastModified: lastModifiedOf(loaded.record), json: itemJson(version, r, loaded, etag, undefined, false) };
}

/**
 * An object as JSON under its ETag: the text of its own GET, or with `fields` of a sparse list item. List pages
 * use the same memo, so a page of records already read (the store shares list rows until its data changes) is
 * joined from strings rendered once.
 */
export function itemJson(
  version: ApiVersion,
  r: CompiledResource,
  loaded: Loaded,
  etag: string,
  fields: string[] | undefined,
  /** Whether the text is joined into a page (FirstText): copied flat at its FLAT_FROM-th. */
  inPage: boolean,
): string {
  let texts = rendered.get(loaded.record);
  if (texts === undefined && Object.isFrozen(loaded.record)) {
    texts = new Map();
    rendered.set(loaded.record, texts);
  }
  // A sparse view is another text of the same record and tag: `fields` (already checked) is part of its key.
  const key = fields === undefined ? etag : viewKeyOf(fields) + etag;
  const kept = texts?.get(key);
  if (typeof kept === 'string') return kept;
  if (kept !== undefined) {
    if (!inPage || ++kept.pages < FLAT_FROM) return kept.text;
    // Kept flat from now on, as every page that sends it would otherwise walk the pieces it was joined from (flat-text.ts).
    const flat = flatText(kept.text);
    texts!.set(key, flat);
    return flat;
  }
  const json = itemText(version, r, loaded, fields) ?? JSON.stringify(represent(version, r, loaded, fields));
  if (texts !== undefined && texts.size < TEXTS_PER_RECORD) texts.set(key, { text: json, pages: inPage ? 1 : 0 });
  return json;
}

/** What a GET of one object answers: its body and validators (the ETag of `coding`), the coding, and whether the client's copy is current (304). */
export interface ObjectRead extends ObjectBody {
  coding: Coding;
  notModified: boolean;
}

/** A GET of one object: what it names, who asks, and its conditional headers. */
export interface ObjectRequest {
  version: ApiVersion;
  resource: CompiledResource;
  principal: Principal;
  id: string;
  ifNoneMatch: string | undefined;
  ifModifiedSince: string | undefined;
  acceptEncoding: string | string[] | undefined;
  compression: Compression;
  /** When the request arrived (performance.now(); Ctx.since). */
  since?: number;
}

/**
 * The one GET-by-id implementation, shared by the Fastify route and the lean read path
 * (src/http/transport/fast-reads.ts): load what the principal may see, render it once, choose the coding it is
 * sent in, and apply If-None-Match to that coding's ETag, or If-Modified-Since (RFC 9110 §13.1.2, §13.1.3).
 */
export async function readObject(services: ResourceService, q: ObjectRequest): Promise<ObjectRead> {
  return objectRead(q, await services.get({ principal: q.principal, format: 'json', since: q.since }, q.resource.name, q.id));
}

/** `readObject` answered at once when the services can load the object without waiting (ResourceService.getNow); undefined otherwise. */
export function readObjectNow(services: ResourceService, q: ObjectRequest): ObjectRead | undefined {
  const loaded = services.getNow({ principal: q.principal, format: 'json', since: q.since }, q.resource.name, q.id);
  return loaded && objectRead(q, loaded);
}

function objectRead(q: ObjectRequest, loaded: Loaded): ObjectRead {
  const body = objectBody(q.version, q.resource, loaded);
  const coding = q.compression.codingFor(q.acceptEncoding, body.json);
  const etag = codedEtag(body.etag, coding);
  return { etag, lastModified: body.lastModified, json: body.json, coding, notModified: notModified(q.ifNoneMatch, q.ifModifiedSince, etag, loaded.record) };
}
