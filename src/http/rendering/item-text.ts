// An object's JSON text at the newest version written straight from its record: the bytes JSON.stringify(represent(…)) gives, without building the view, its links and the object holding both.
import type { CompiledResource } from '../../model/compile.js';
import type { ApiVersion } from '../../model/versions.js';
import type { Loaded } from '../../services/access.js';
import { actionPath, objectPath } from './render.js';

/** Per resource: each rendered field's name, and its `"name":` as JSON writes it. */
interface Layout {
  names: readonly string[];
  keys: ReadonlyMap<string, string>;
}

const layouts = new WeakMap<CompiledResource, Layout | null>();

/**
 * Null when the text could differ from JSON.stringify's: a name that is an array index (an object lists
 * those first, whatever the order they were set in) or `links` (the links would overwrite the field in its
 * place). Such resources take the generic path.
 */
function layoutOf(r: CompiledResource): Layout | null {
  let layout = layouts.get(r);
  if (layout === undefined) {
    const odd = r.rendered.some((name) => name === 'links' || /^(0|[1-9]\d*)$/.test(name));
    layout = odd ? null : { names: r.rendered, keys: new Map(r.rendered.map((name) => [name, `${JSON.stringify(name)}:`])) };
    layouts.set(r, layout);
  }
  return layout;
}

/**
 * A field as the view holds it (absent is null) after its key; nothing when JSON would leave the key out
 * (a value with no JSON form: records hold none, but the text must not differ if one did).
 */
function member(key: string, value: unknown): string {
  if (value === null || value === undefined) return `${key}null,`;
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? '' : `${key}${text},`;
}

/**
 * The links section as objectLinks (src/http/rendering/render.ts) builds it: self, edit, delete, then the actions allowed now.
 * Written out rather than `JSON.stringify(objectLinks(…))`, which cost 1.7 µs more per item (a third of an item's
 * text); test/unit/http/item-text.test.ts keeps the two in step for every resource and set of links.
 */
function linksText(version: ApiVersion, r: CompiledResource, loaded: Loaded): string {
  const id = loaded.record.id;
  const self = JSON.stringify(objectPath(version, r, id));
  let out = `[{"rel":"self","href":${self},"method":"GET"}`;
  if (loaded.access.update) out += `,{"rel":"edit","href":${self},"method":"PATCH"}`;
  if (loaded.access.delete) out += `,{"rel":"delete","href":${self},"method":"DELETE"}`;
  for (const name of loaded.access.actions) {
    out += `,{"rel":${JSON.stringify(name)},"href":${JSON.stringify(actionPath(version, r, id, name))},"method":${JSON.stringify(r.def.actions![name]!.method)}}`;
  }
  return `${out}]`;
}

/**
 * The object's text, or undefined where only the generic path is exact: an older version (its view is
 * translated down by change modules) or a resource whose layout is odd (above). `fields` were checked
 * against the rendered names and hold each once (src/query/list-params.ts parseFields).
 */
export function itemText(version: ApiVersion, r: CompiledResource, loaded: Loaded, fields: readonly string[] | undefined): string | undefined {
  if (version.newer) return undefined;
  const layout = layoutOf(r);
  if (layout === null) return undefined;
  const record = loaded.record;
  const names = fields ?? layout.names;
  let out = '{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const key = layout.keys.get(name);
    if (key === undefined) return undefined;
    out += member(key, record[name]);
  }
  return `${out}"links":${linksText(version, r, loaded)}}`;
}
