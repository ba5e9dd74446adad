// The event catalog (DESIGN §9): every event type the model can emit, with its payload schema in each version.
import type { CompiledModel } from '../model/compile.js';
import type { EventType } from '../model/event-types.js';
import type { JsonSchema } from '../model/schema.js';
import type { ApiVersion } from '../model/versions.js';
import { objectInVersion } from './resource-operations.js';

export { eventTypes, type EventType } from '../model/event-types.js';

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

/**
 * A webhook delivery whose full body would pass the size bound (DESIGN §9: 64 KiB) is sent thin: the envelope,
 * `thin: true`, and where to fetch the object in the endpoint's version (src/events/event-view.ts thinEventView).
 */
export function thinEventSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'A delivery too large to send whole: fetch the object at `data.object.url` (with your credentials).',
    required: ['id', 'type', 'sequence', 'created_at', 'api_version', 'thin', 'data'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', format: 'uuid' },
      type: { type: 'string' },
      sequence: { type: 'integer', minimum: 1 },
      created_at: { type: 'string', format: 'date-time' },
      api_version: { type: 'string', description: 'The release date of the version the URL is in.' },
      thin: { const: true },
      data: {
        type: 'object',
        required: ['object'],
        additionalProperties: false,
        properties: {
          object: {
            type: 'object',
            required: ['id', 'url'],
            additionalProperties: false,
            properties: { id: { type: 'string' }, url: { type: 'string', description: 'The object’s path, e.g. `/v2/orders/{id}`.' } },
          },
        },
      },
    },
  };
}
