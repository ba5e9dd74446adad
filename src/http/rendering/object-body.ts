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
 * memoised: they cannot change, and they are dropped with the record when the cache lets it go.
 */
const rendered = new WeakMap<StoredRecord, RecordTexts>();

/**
 * A record's kept texts: by view (`*` its whole text, else a sparse view's field list), then by ETag. Two levels
 * rather than one key joining both: the view's key is one string per plan (its hash computed once), where a joined
 * key was a new string to build and hash for every item of every page (a tenth of a sparse page's CPU, 2026-11-29).
 */
interface RecordTexts {
  byView: Map<string, Map<string, string>>;
  /** Texts kept in all: at most TEXTS_PER_RECORD. */
  count: number;
}

/**
 * Bounded: a record has few tags (callers' links), but a client could ask for many field sets, and the caches keep
 * up to 20,000 records: 8 texts each bounds what a client can make this hold.
 */
const TEXTS_PER_RECORD = 8;

/** A sparse view's key, `fields` joined: once per fields array (a kept plan's, src/query/plan-memo.ts, is reused for every page it plans). */
const viewKeys = new WeakMap<readonly string[], string>();

function viewKeyOf(fields: readonly string[] | undefined): string {
  if (fields === undefined) return '*';
  let key = viewKeys.get(fields);
  if (key === undefined) viewKeys.set(fields, (key = fields.join(',')));
  return key;
}

export function objectBody(version: ApiVersion, r: CompiledResource, loaded: Loaded): ObjectBody {
  const etag = etagOf(loaded.record, loaded.access, version.name);
  return { etag, lastModified: lastModifiedOf(loaded.record), json: itemJson(version, r, loaded, etag, undefined) };
}

/**
 * An object as JSON under its ETag: the text of its own GET, or with `fields` of a sparse list item. List pages
 * use the same memo, so a page of records already read (the store shares list rows until its data changes) is
 * joined from strings rendered once.
 */
export function itemJson(version: ApiVersion, r: CompiledResource, loaded: Loaded, etag: string, fields: string[] | undefined): string {
  let texts = rendered.get(loaded.record);
  if (texts === undefined && Object.isFrozen(loaded.record)) {
    texts = { byView: new Map(), count: 0 };
    rendered.set(loaded.record, texts);
  }
  // A sparse view is another text of the same record and tag: `fields` (already checked) names it.
  const view = viewKeyOf(fields);
  const byTag = texts?.byView.get(view);
  let json = byTag?.get(etag);
  if (json === undefined) {
    json = itemText(version, r, loaded, fields) ?? JSON.stringify(represent(version, r, loaded, fields));
    if (texts !== undefined && texts.count < TEXTS_PER_RECORD) {
      // Kept flat: every page and read that sends it would otherwise walk the pieces it was joined from (flat-text.ts).
      json = flatText(json);
      if (byTag === undefined) texts.byView.set(view, new Map([[etag, json]]));
      else byTag.set(etag, json);
      texts.count++;
    }
  }
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
