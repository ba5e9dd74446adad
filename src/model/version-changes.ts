// Version changes as declarative field mappings: one description translates bodies up, views and event payloads down, query and error field names both ways, and documents itself.

/**
 * How one resource's fields differ between a version (old) and the next newer one (new):
 * - `rename`: the old field `from` is the new field `to` (`name` → `full_name`);
 * - `nest`: old flat fields become the parts of one new object field (`price_cents` + `currency` → `price`
 *   `{amount, currency}`): `parts` maps each part of `into` to the old field holding it;
 * - `computed`: an old field that no longer exists, shown to old clients as computed from the new view,
 *   and ignored when an old client sends it.
 */
export type FieldMapping =
  | { rename: { from: string; to: string } }
  /** `readOnly`: the new field is never written by clients (an order's `total`), so bodies are left as they are. */
  | { nest: { into: string; parts: Record<string, string>; readOnly?: boolean } }
  /** `schema`: the JSON Schema of what `down` returns, as old clients' documents and validators show it. */
  | { computed: { field: string; description: string; schema: Record<string, unknown>; down: (view: Readonly<Record<string, unknown>>) => unknown } };

export interface VersionChange {
  /** What changed, for people: the migration guide and the changelog quote it. */
  description: string;
  resource: string;
  fields: FieldMapping[];
}

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request body written in the old shape, in the new one. Fields the change does not name pass unchanged. */
export function bodyUp(change: VersionChange, body: Obj): Obj {
  const out: Obj = { ...body };
  for (const m of change.fields) {
    if ('rename' in m) {
      if (m.rename.from in out) {
        out[m.rename.to] = out[m.rename.from];
        delete out[m.rename.from];
      }
    } else if ('nest' in m) {
      if (m.nest.readOnly) continue;
      const present = Object.entries(m.nest.parts).filter(([, old]) => old in out);
      if (present.length > 0) {
        // A merge patch may send only some parts; null for the whole old group clears the field.
        const allNull = present.every(([, old]) => out[old] === null);
        const nested: Obj = {};
        for (const [part, old] of present) nested[part] = out[old];
        for (const [, old] of present) delete out[old];
        out[m.nest.into] = allNull && present.length === Object.keys(m.nest.parts).length ? null : nested;
      }
    } else {
      delete out[m.computed.field];
    }
  }
  return out;
}

/** What a change does to a view's top-level fields, indexed once per change: views go down on every response row. */
interface ViewIndex {
  renamed: Map<string, string>;
  nested: Map<string, Array<[string, string]>>;
  computed: Array<{ field: string; down: (view: Readonly<Obj>) => unknown }>;
}
const viewIndexes = new WeakMap<VersionChange, ViewIndex>();

function viewIndex(change: VersionChange): ViewIndex {
  let index = viewIndexes.get(change);
  if (!index) {
    index = { renamed: new Map(), nested: new Map(), computed: [] };
    for (const m of change.fields) {
      if ('rename' in m) index.renamed.set(m.rename.to, m.rename.from);
      else if ('nest' in m) index.nested.set(m.nest.into, Object.entries(m.nest.parts));
      else index.computed.push({ field: m.computed.field, down: m.computed.down });
    }
    viewIndexes.set(change, index);
  }
  return index;
}

/**
 * A view (or an event payload) in the new shape, in the old one. Built in one pass into a fresh object, old
 * fields where the new ones stood (no `delete`, which would leave V8 a slow dictionary object to serialise).
 */
export function viewDown(change: VersionChange, view: Obj): Obj {
  const { renamed, nested, computed } = viewIndex(change);
  const out: Obj = {};
  for (const key of Object.keys(view)) {
    const from = renamed.get(key);
    if (from !== undefined) {
      out[from] = view[key];
      continue;
    }
    const parts = nested.get(key);
    if (parts !== undefined) {
      const value = view[key];
      for (const [part, old] of parts) out[old] = isObject(value) ? (value[part] ?? null) : null;
      continue;
    }
    out[key] = view[key];
  }
  // Computed fields read the new view as it arrived.
  for (const c of computed) out[c.field] = c.down(view);
  return out;
}

/**
 * A field path in the old version (a filter's field, a sort key, a sparse field, `price_cents`) as the new
 * version names it (`price.amount`); undefined for a computed field, which has no new name.
 */
export function pathUp(change: VersionChange, path: string): string | undefined {
  for (const m of change.fields) {
    if ('rename' in m) {
      if (path === m.rename.from) return m.rename.to;
      if (path.startsWith(`${m.rename.from}.`)) return `${m.rename.to}${path.slice(m.rename.from.length)}`;
    } else if ('nest' in m) {
      const part = Object.entries(m.nest.parts).find(([, old]) => old === path)?.[0];
      if (part !== undefined) return `${m.nest.into}.${part}`;
    } else if (path === m.computed.field) {
      return undefined;
    }
  }
  return path;
}

/** A field path in the new version (an error detail's `field`) as the old version names it. */
export function pathDown(change: VersionChange, path: string): string {
  for (const m of change.fields) {
    if ('rename' in m) {
      if (path === m.rename.to) return m.rename.from;
      if (path.startsWith(`${m.rename.to}.`)) return `${m.rename.from}${path.slice(m.rename.to.length)}`;
    } else if ('nest' in m) {
      if (path === m.nest.into) return Object.values(m.nest.parts)[0]!;
      if (path.startsWith(`${m.nest.into}.`)) {
        const old = m.nest.parts[path.slice(m.nest.into.length + 1)];
        if (old !== undefined) return old;
      }
    }
  }
  return path;
}

/** The change in words, one line per mapping, as the migration guide prints it. */
export function describeChange(change: VersionChange): string[] {
  return change.fields.map((m) => {
    if ('rename' in m) return `${change.resource}: \`${m.rename.from}\` is now \`${m.rename.to}\`.`;
    if ('nest' in m) {
      const parts = Object.entries(m.nest.parts)
        .map(([part, old]) => `\`${old}\` → \`${m.nest.into}.${part}\``)
        .join(', ');
      return `${change.resource}: ${parts} (one object field \`${m.nest.into}\`).`;
    }
    return `${change.resource}: \`${m.computed.field}\` is gone; older versions still show it (${m.computed.description}).`;
  });
}
