// Every event type an app can emit (DESIGN §9), enumerated from the model: the event catalog, the OpenAPI `webhooks` section and the services' check of hook-written types read this one list.
import { emitsEvents, type CompiledModel, type CompiledResource } from './compile.js';

export interface EventType {
  /** `order.created`, `order.paid`. */
  type: string;
  resource: string;
  description: string;
  /** Updates carry the changed fields' earlier values. */
  previous: boolean;
}

function typesOf(r: CompiledResource): EventType[] {
  const label = r.singular.replace(/_/g, ' ');
  const out: EventType[] = [
    { type: `${r.singular}.created`, resource: r.name, description: `A ${label} was created.`, previous: false },
    { type: `${r.singular}.updated`, resource: r.name, description: `A ${label} changed; \`previous_attributes\` holds the changed fields’ earlier values.`, previous: true },
    { type: `${r.singular}.deleted`, resource: r.name, description: `A ${label} was deleted; the object as it was.`, previous: false },
  ];
  for (const [field, byValue] of Object.entries(r.def.stateEvents ?? {})) {
    for (const [value, type] of Object.entries(byValue)) {
      out.push({ type, resource: r.name, description: `A ${label}’s \`${field}\` became \`${value}\` (instead of ${r.singular}.updated).`, previous: true });
    }
  }
  // Written by the resource's hooks through services.update: updates, so they carry previous_attributes.
  for (const [type, description] of Object.entries(r.def.eventTypes ?? {})) out.push({ type, resource: r.name, description, previous: true });
  return out;
}

const cache = new WeakMap<CompiledModel, ReadonlyMap<string, EventType>>();

/** Every event type of the app by name, built once per model: each resource's created, updated and deleted, its state events and its declared types. */
export function eventTypeTable(model: CompiledModel): ReadonlyMap<string, EventType> {
  let table = cache.get(model);
  if (table === undefined) {
    const entries = new Map<string, EventType>();
    for (const r of model.resources.values()) if (emitsEvents(r)) for (const e of typesOf(r)) if (!entries.has(e.type)) entries.set(e.type, e);
    table = entries;
    cache.set(model, table);
  }
  return table;
}

/** The event types in catalog order. */
export function eventTypes(model: CompiledModel): EventType[] {
  return [...eventTypeTable(model).values()];
}
