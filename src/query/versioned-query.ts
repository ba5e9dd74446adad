// A list query written in an older version's field names, in the newest's (filters, sort), with the names that version renders (sparse fields) and a way back for errors.
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import type { CompiledResource } from '../model/compile.js';
import { translateDown, translatePathDown, translatePathUp, type ApiVersion } from '../model/versions.js';
import { PAGINATION_PARAMS } from './pagination.js';
import type { QueryInput } from './list-params.js';

export interface VersionedQuery {
  /** The query in the newest names. */
  query: QueryInput;
  /** The fields the version renders: what `fields=` may name (it picks from the translated view). */
  rendered: readonly string[];
  /** An INVALID_QUERY error about the translated query, naming what the client sent instead. */
  restore(err: unknown): unknown;
}

const FILTER_KEY = /^([^[\]]+)(\[[^\]]*\])?$/;
const unchanged = (err: unknown): unknown => err;

/** The top-level fields `version` shows for `r`: the newest ones walked back, computed once per pair. */
const renderedCache = new WeakMap<ApiVersion, Map<string, readonly string[]>>();
export function renderedIn(version: ApiVersion, r: CompiledResource): readonly string[] {
  let byResource = renderedCache.get(version);
  if (!byResource) renderedCache.set(version, (byResource = new Map()));
  let names = byResource.get(r.name);
  if (!names) {
    const template = Object.fromEntries(r.rendered.map((name) => [name, null]));
    names = Object.keys(translateDown(version, r.name, template));
    byResource.set(r.name, names);
  }
  return names;
}

/**
 * The newest version's queries pass through untouched. An older version's filter keys (`price_cents[gte]`)
 * and sort keys become the newest paths (`price.amount[gte]`); a name that version does not have (a newer
 * name, `price.amount` on v1) is refused as the newest version refuses an unknown field, so a client never
 * mixes versions by accident. Errors found later in the translated query are restored to the names sent.
 */
export function queryInVersion(version: ApiVersion, r: CompiledResource, query: QueryInput): VersionedQuery {
  if (!version.newer) return { query, rendered: r.rendered, restore: unchanged };
  const rendered = renderedIn(version, r);
  const known = new Set(rendered);
  const details: ErrorDetail[] = [];
  const keys = new Map<string, string>();
  const sortParts = new Map<string, string>();
  const out: QueryInput = {};
  const up = (path: string): string | undefined => (known.has(path.split('.')[0]!) ? translatePathUp(version, r.name, path) : undefined);
  for (const [key, value] of Object.entries(query)) {
    if (key === 'sort' && typeof value === 'string') {
      out.sort = value
        .split(',')
        .map((part) => {
          const desc = part.startsWith('-');
          const path = desc ? part.slice(1) : part;
          const newest = up(path);
          if (newest === undefined) {
            if (path !== '') details.push({ field: 'sort', message: `${path} is not a sortable field of ${r.name}`, value: part });
            return part;
          }
          const translated = `${desc ? '-' : ''}${newest}`;
          sortParts.set(translated, part);
          return translated;
        })
        .join(',');
      continue;
    }
    const m = FILTER_KEY.exec(key);
    if (key === 'fields' || key === 'q' || key === 'sort' || PAGINATION_PARAMS.has(key) || !m) {
      out[key] = value;
      continue;
    }
    const newest = up(m[1]!);
    if (newest === undefined) {
      details.push({ field: key, message: `${m[1]} is not a filterable field of ${r.name}`, value });
      continue;
    }
    const translated = `${newest}${m[2] ?? ''}`;
    keys.set(translated, key);
    out[translated] = value;
  }
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters are invalid.', { details });
  const restore = (err: unknown): unknown => {
    if (!(err instanceof AppError) || err.code !== 'INVALID_QUERY' || !err.details) return err;
    const restored = err.details.map((d) => {
      if (d.field === 'sort' && typeof d.value === 'string') return { ...d, value: sortParts.get(d.value) ?? d.value };
      const sent = keys.get(d.field);
      return sent === undefined ? d : { ...d, field: sent };
    });
    return new AppError(err.code, err.message, { details: restored, ...(err.headers ? { headers: err.headers } : {}), facts: err.facts });
  };
  return { query: out, rendered, restore };
}

/** An error about a request body in the newest shape (`price.amount`), naming fields as `version` does (`price_cents`). */
export function errorInVersion(err: AppError, version: ApiVersion, resource: string): AppError {
  if (!version.newer || !err.details || err.code === 'INVALID_QUERY' || err.facts.fieldsInVersion) return err;
  const details = err.details.map((d) => ({ ...d, field: translatePathDown(version, resource, d.field) }));
  return new AppError(err.code, err.message, { details, ...(err.headers ? { headers: err.headers } : {}), facts: err.facts });
}
