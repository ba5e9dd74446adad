// Schemas per version (DESIGN §10): the newest version's schemas, generated from the model, walked down the version changes to what each older version takes and shows.
import type { JsonSchema } from './schema.js';
import type { VersionChange } from './version-changes.js';
import { changesDown, type ApiVersion } from './versions.js';

/** `body`: what a client sends (a computed field is accepted and ignored); `view`: what it receives. */
export type SchemaKind = 'body' | 'view';

type Props = Record<string, JsonSchema>;

function typesOf(schema: JsonSchema): unknown[] {
  return Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
}

/** A part of a nested object as its own old field: nullable when the whole object was. */
function partSchema(whole: JsonSchema, part: JsonSchema | undefined): JsonSchema {
  const schema = part ?? {};
  if (!typesOf(whole).includes('null') || schema.type === undefined || typesOf(schema).includes('null')) return schema;
  return { ...schema, type: [...typesOf(schema), 'null'] };
}

/**
 * One object schema of the newer version as the older one names it (the inverse of `bodyUp`/`viewDown` in
 * src/model/version-changes.ts): renamed properties take their old names, a nested object becomes its old flat
 * fields, a computed field appears with its declared schema. Property order is kept, old fields where new ones stood.
 */
export function schemaDown(change: VersionChange, schema: JsonSchema, kind: SchemaKind): JsonSchema {
  const props = (schema.properties ?? {}) as Props;
  const required = new Set((schema.required ?? []) as string[]);
  const out: Props = {};
  const outRequired: string[] = [];
  const renamed = new Map<string, string>();
  const nested = new Map<string, { parts: Record<string, string>; readOnly: boolean }>();
  for (const m of change.fields) {
    if ('rename' in m) renamed.set(m.rename.to, m.rename.from);
    else if ('nest' in m) nested.set(m.nest.into, { parts: m.nest.parts, readOnly: m.nest.readOnly === true });
  }
  for (const [name, prop] of Object.entries(props)) {
    const from = renamed.get(name);
    const nest = nested.get(name);
    if (from !== undefined) {
      out[from] = prop;
      if (required.has(name)) outRequired.push(from);
    } else if (nest && !(kind === 'body' && nest.readOnly)) {
      const inner = (prop.properties ?? {}) as Props;
      const innerRequired = new Set((prop.required ?? []) as string[]);
      for (const [part, old] of Object.entries(nest.parts)) {
        // A field of the old version may stand beside the nested one already (an order's `currency`): it stays as it is.
        if (old in props && old !== name) continue;
        out[old] = partSchema(prop, inner[part]);
        if (required.has(name) && innerRequired.has(part)) outRequired.push(old);
      }
    } else {
      out[name] = prop;
      if (required.has(name)) outRequired.push(name);
    }
  }
  for (const m of change.fields) {
    if (!('computed' in m)) continue;
    // Old clients see it on every object; sent in a body it is accepted and ignored (bodyUp drops it).
    out[m.computed.field] =
      kind === 'view' ? { ...m.computed.schema, description: m.computed.description } : { ...m.computed.schema, readOnly: true, description: `Ignored: ${m.computed.description}` };
    if (kind === 'view') outRequired.push(m.computed.field);
  }
  return { ...schema, properties: out, required: [...new Set(outRequired)] };
}

/** An object schema of the newest version, as `version` names it; the same object when nothing changed. */
export function schemaInVersion(version: ApiVersion, resource: string, schema: JsonSchema, kind: SchemaKind): JsonSchema {
  let out = schema;
  for (const change of changesDown(version, resource)) out = schemaDown(change, out, kind);
  return out;
}
