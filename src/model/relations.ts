// Named relations both ways and the operation names of actions, derived from belongsTo and the actions (issue 29.1): `order.items`, `orderItem.product`, `payOrder`.
import { camelCase, pascalCase } from '../lib/names.js';
import type { AppDef, BelongsTo, ResourceDef } from './types.js';

/**
 * A relation as a front end names it on one resource: `one` follows this resource's foreign key to its parent
 * (`orderItem.product` by `product_id`); `many` gathers the children whose foreign key names this object
 * (`order.items` by `order_items.order_id`). Names are camelCase, as the front ends that use them show them.
 */
export interface Relation {
  name: string;
  kind: 'one' | 'many';
  /** The resource at the other end. */
  resource: string;
  /** The foreign key: this resource's field for `one`, the other resource's for `many`. */
  field: string;
}

/** `product_id` → `product`; a foreign key not named `…_id` keeps its name with `Object`, so it never shadows the field itself. */
function forwardName(rel: BelongsTo): string {
  if (rel.relation) return rel.relation;
  return rel.field.endsWith('_id') ? camelCase(rel.field.slice(0, -3)) : `${camelCase(rel.field)}Object`;
}

/** `order-items` under `orders` (singular `order`) → `items`; `orders` under `users` → `orders`. */
function inverseName(child: ResourceDef, rel: BelongsTo, parent: ResourceDef): string {
  if (rel.inverse) return rel.inverse;
  const prefix = `${parent.singular.replace(/_/g, '-')}-`;
  return camelCase(child.name.startsWith(prefix) && child.name.length > prefix.length ? child.name.slice(prefix.length) : child.name);
}

/** Whether a resource takes part in relations: internal bookkeeping (sessions, signing keys) has no routes, so no front end shows it. */
function related(def: ResourceDef | undefined): def is ResourceDef {
  return def !== undefined && !def.internal;
}

/**
 * Every relation of `def` in `app`, both ways. Names must not collide with the resource's fields (in camelCase)
 * nor with each other: a collision of derived names takes the foreign key into the inverse name
 * (`ordersByBuyer`), one of names the author gave is an error.
 */
export function relationsOf(def: ResourceDef, app: AppDef): Relation[] {
  if (!related(def)) return [];
  const byName = new Map(app.resources.map((r) => [r.name, r]));
  const taken = new Set(['id', 'createdAt', 'updatedAt', ...Object.keys(def.fields).map(camelCase)]);
  const out: Relation[] = [];
  const add = (relation: Relation, explicit: boolean, fallback: () => string): void => {
    let name = relation.name;
    if (taken.has(name)) {
      if (explicit) throw new Error(`${def.name}: the relation name ${name} is taken by a field or another relation`);
      name = fallback();
      if (taken.has(name)) throw new Error(`${def.name}: the relation names ${relation.name} and ${name} are both taken; name it with belongsTo's relation or inverse`);
    }
    taken.add(name);
    out.push({ ...relation, name });
  };
  for (const rel of def.belongsTo ?? []) {
    if (!related(byName.get(rel.resource))) continue;
    add({ name: forwardName(rel), kind: 'one', resource: rel.resource, field: rel.field }, rel.relation !== undefined, () => `${forwardName(rel)}Object`);
  }
  for (const child of app.resources) {
    if (!related(child)) continue;
    for (const rel of child.belongsTo ?? []) {
      if (rel.resource !== def.name) continue;
      const name = inverseName(child, rel, def);
      add({ name, kind: 'many', resource: child.name, field: rel.field }, rel.inverse !== undefined, () => `${name}By${pascalCase(rel.field.replace(/_id$/, ''))}`);
    }
  }
  return out;
}

/** The operation name of each POST action: its verb and the resource's singular (`cancelOrder`, `payOrder`). */
export function actionNamesOf(def: ResourceDef): Record<string, string> {
  const names: Record<string, string> = {};
  for (const [name, action] of Object.entries(def.actions ?? {})) {
    if (action.method === 'POST') names[name] = `${camelCase(action.verb ?? name)}${pascalCase(def.singular)}`;
  }
  return names;
}
