// The event catalog (DESIGN §9): every event type the model can emit, with its payload schema in each version.
import { emitsEvents, type CompiledModel } from '../model/compile.js';
import type { JsonSchema } from '../model/schema.js';
import type { ApiVersion } from '../model/versions.js';
import { objectInVersion } from './resource-operations.js';

export interface EventType {
  /** `order.created`, `order.paid`. */
  type: string;
  resource: string;
  description: string;
  /** Updates carry the changed fields' earlier values. */
  previous: boolean;
}

/** Every event type of the app: each resource's created, updated and deleted, and its state events. */
export function eventTypes(model: CompiledModel): EventType[] {
  const out: EventType[] = [];
  for (const r of model.resources.values()) {
    if (!emitsEvents(r)) continue;
    const label = r.singular.replace(/_/g, ' ');
    out.push(
      { type: `${r.singular}.created`, resource: r.name, description: `A ${label} was created.`, previous: false },
      { type: `${r.singular}.updated`, resource: r.name, description: `A ${label} changed; \`previous_attributes\` holds the changed fields’ earlier values.`, previous: true },
      { type: `${r.singular}.deleted`, resource: r.name, description: `A ${label} was deleted; the object as it was.`, previous: false },
    );
    for (const [field, byValue] of Object.entries(r.def.stateEvents ?? {})) {
      for (const [value, type] of Object.entries(byValue)) {
        out.push({ type, resource: r.name, description: `A ${label}’s \`${field}\` became \`${value}\` (instead of ${r.singular}.updated).`, previous: true });
      }
    }
  }
  return [...new Map(out.map((e) => [e.type, e])).values()];
}

/** An event as `/events`, the stream and webhook deliveries carry it in `version`: the envelope and the object in that version's shape. */
export function eventSchema(model: CompiledModel, version: ApiVersion, event: EventType): JsonSchema {
  const object = objectInVersion(version, model.resources.get(event.resource)!);
  // The stored object has no links: events carry the object's fields, not its hypermedia.
  const { links: _links, ...fields } = object.properties as Record<string, JsonSchema>;
  const data: JsonSchema = { ...object, properties: fields, required: ((object.required ?? []) as string[]).filter((f) => f !== 'links') };
  return {
    type: 'object',
    description: event.description,
    required: ['id', 'type', 'sequence', 'created_at', 'api_version', 'data'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      type: { const: event.type },
      sequence: { type: 'integer', minimum: 1 },
      created_at: { type: 'string', format: 'date-time' },
      api_version: { type: 'string', description: 'The release date of the version the payload is shown in.' },
      data: { type: 'object', required: ['object'], properties: { object: data } },
      ...(event.previous ? { previous_attributes: { type: 'object', description: 'The changed fields as they were before.' } } : {}),
    },
  };
}
