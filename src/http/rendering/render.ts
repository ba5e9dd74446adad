// Renders records for the requested API version: the public view, translated down, plus hypermedia links.
import type { CompiledResource } from '../../model/compile.js';
import { translateDown, type ApiVersion } from '../../model/versions.js';
import type { Loaded } from '../../services/access.js';
import { publicView } from '../../services/views.js';

export interface Link {
  rel: string;
  href: string;
  method: string;
}

export function objectPath(version: ApiVersion, r: CompiledResource, id: string): string {
  return `${version.prefix}/${r.name}/${id}`;
}

/** An action's path on one object (`/v2/orders/{id}/payment`): its link, and the Location of an asynchronous action's 202. */
export function actionPath(version: ApiVersion, r: CompiledResource, id: string, action: string): string {
  return `${objectPath(version, r, id)}/${action}`;
}

export function objectLinks(version: ApiVersion, r: CompiledResource, loaded: Loaded): Link[] {
  const self = objectPath(version, r, loaded.record.id);
  const links: Link[] = [{ rel: 'self', href: self, method: 'GET' }];
  if (loaded.access.update) links.push({ rel: 'edit', href: self, method: 'PATCH' });
  if (loaded.access.delete) links.push({ rel: 'delete', href: self, method: 'DELETE' });
  for (const name of loaded.access.actions) {
    links.push({ rel: name, href: actionPath(version, r, loaded.record.id, name), method: r.def.actions![name]!.method });
  }
  return links;
}

/** The one place responses meet version translation: every object a client sees passes through here. */
export function represent(version: ApiVersion, r: CompiledResource, loaded: Loaded, fields?: string[]): Record<string, unknown> {
  let view = translateDown(version, r.name, publicView(r, loaded.record));
  if (fields) view = Object.fromEntries(fields.map((f) => [f, view[f] ?? null]));
  return { ...view, links: objectLinks(version, r, loaded) };
}
