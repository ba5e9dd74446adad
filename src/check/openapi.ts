// Reads collection paths out of an OpenAPI document (3.x or Swagger 2): GET paths without parameters that list items.
import { isObject } from './verdict.js';

/** Query parameters that mark a GET as a paginated list (spec §4 query parameters). */
const PAGING_PARAMS = new Set(['limit', 'offset', 'cursor', 'page', 'per_page', 'page_size', 'page_token', 'after_id']);

/** A collection of a document, and the item field its item path is keyed by (`rid` for `/products/{rid}`). */
export interface DocumentCollection {
  path: string;
  idField: string | undefined;
  /** Fields the document requires in a create body (POST on the collection), when it says. */
  createRequired: string[] | undefined;
}

/** A schema, following one local `$ref` (`#/components/schemas/X`, `#/definitions/X`). */
function resolve(doc: Record<string, unknown>, schema: unknown): Record<string, unknown> | undefined {
  if (!isObject(schema)) return undefined;
  if (typeof schema.$ref !== 'string' || !schema.$ref.startsWith('#/')) return schema;
  let node: unknown = doc;
  for (const part of schema.$ref.slice(2).split('/')) node = isObject(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isObject(node) ? node : undefined;
}

/** The `required` list of a POST's JSON body schema. */
function createRequired(doc: Record<string, unknown>, item: Record<string, unknown>): string[] | undefined {
  const post = item.post;
  if (!isObject(post) || !isObject(post.requestBody) || !isObject(post.requestBody.content)) return undefined;
  const json = Object.entries(post.requestBody.content).find(([type]) => /json/i.test(type))?.[1];
  const schema = resolve(doc, isObject(json) ? json.schema : undefined);
  return Array.isArray(schema?.required) ? schema.required.filter((f): f is string => typeof f === 'string') : undefined;
}

/**
 * The collections of a document, with its server's path prefix (`servers[0].url` or Swagger's `basePath`).
 * A path is a collection when it has a GET, no path parameter, and either an item path under it (`/x/{id}`) or a
 * pagination parameter.
 */
export function collectionPaths(doc: unknown, documentUrl: URL): DocumentCollection[] {
  if (!isObject(doc) || !isObject(doc.paths)) return [];
  const paths = doc.paths;
  let prefix = '';
  const server = Array.isArray(doc.servers) && isObject(doc.servers[0]) ? doc.servers[0].url : undefined;
  if (typeof server === 'string' && !server.includes('{')) prefix = new URL(server, documentUrl).pathname.replace(/\/+$/, '');
  else if (typeof doc.basePath === 'string') prefix = doc.basePath.replace(/\/+$/, '');
  const names = Object.keys(paths);
  const out: DocumentCollection[] = [];
  for (const path of names) {
    const item = paths[path];
    if (path.includes('{') || !isObject(item) || !isObject(item.get)) continue;
    const params = [...(Array.isArray(item.get.parameters) ? item.get.parameters : []), ...(Array.isArray(item.parameters) ? item.parameters : [])];
    const paged = params.some((p) => isObject(p) && p.in === 'query' && typeof p.name === 'string' && PAGING_PARAMS.has(p.name));
    const itemPath = names.find((n) => n.startsWith(`${path.replace(/\/+$/, '')}/{`) && !n.slice(path.length + 1).includes('/'));
    if (paged || itemPath) {
      out.push({ path: `${prefix}${path}`, idField: itemPath ? /\{([^}]+)\}$/.exec(itemPath)?.[1] : undefined, createRequired: createRequired(doc, item) });
    }
  }
  return out;
}
