// The schema's Subscription root (issue 29.6): `events(after:, types:)` and one object's events (`orderEvents(id:)`), each an `Event`, fed by the log REST's /events stream reads.
import type { EventView } from '../model/event-shape.js';
import { GraphQLID, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLFieldConfigMap, type GraphQLFieldResolver, type GraphQLOutputType } from 'graphql';
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import { emitsEvents, newestVersion, type CompiledModel, type CompiledResource } from '../model/compile.js';
import { eventTypeTable } from '../model/event-types.js';
import type { FeedRequest, FeedStart } from '../services/event-feed.js';
import { globMatches, MAX_TYPE_PATTERNS, TYPE_PATTERN } from '../services/event-visibility.js';
import type { StoredEvent } from '../store/types.js';
import type { Context } from './context.js';
import { singleField } from './names.js';
import { readOne } from './root-fields.js';
import { DateTime, JSONValue, SafeInt } from './scalars.js';

/**
 * What a subscription field answers: where its stream starts, what it may carry and, for one object's events, which
 * object. The SSE transport (src/http/graphql/graphql-sse.ts) turns it into a stream of the process's event hub,
 * the one REST's `/events` streams share, so both follow the same log with the same visibility and resumption.
 * It is an async iterable only in name: graphql-js asks a subscription field for one, but its events are framed
 * as the hub sends them (synchronously, so a stream's send buffer is bounded as REST's), never pulled.
 */
export class LogSubscription implements AsyncIterable<never> {
  constructor(
    readonly start: FeedStart,
    /** The type patterns asked for, kept for deciding visibility again (src/events/stream-guard.ts). */
    readonly types: string[] | undefined,
    /** One object's events only (`orderEvents(id:)`); undefined for every visible event. */
    readonly only: ((event: StoredEvent) => boolean) | undefined,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<never> {
    throw new Error('A LogSubscription is served by the event hub through the SSE transport, not iterated.');
  }
}

/** An event as REST's `/events` renders it in a version (src/events/event-view.ts, given through EngineServices). */
export type EventViewOf = EventView;

/** An event as a subscription shows it: REST's view in the newest version, with the object it is about. */
export type EventSource = EventViewOf & { object_id: string; resource: string };

export const EventType = new GraphQLObjectType<EventSource, Context>({
  name: 'Event',
  description: 'An event of the log (docs/events.md), as `GET /events` shows it in the newest version.',
  fields: {
    id: { type: new GraphQLNonNull(GraphQLID), description: 'The event’s id: what `after` and `Last-Event-ID` resume after.' },
    type: { type: new GraphQLNonNull(GraphQLString), description: 'A declared event type (`order.paid`).' },
    sequence: { type: new GraphQLNonNull(SafeInt), description: 'Its place in the log, strictly increasing in commit order.' },
    createdAt: { type: new GraphQLNonNull(DateTime), resolve: (e) => e.created_at },
    apiVersion: { type: new GraphQLNonNull(GraphQLString), description: 'The release date of the version `data` is rendered in.', resolve: (e) => e.api_version },
    objectId: { type: new GraphQLNonNull(GraphQLID), description: 'The id of the object the event is about.', resolve: (e) => e.object_id },
    resource: { type: new GraphQLNonNull(GraphQLString), description: 'The object’s resource, as REST names it (`orders`, `order-items`).' },
    data: { type: new GraphQLNonNull(JSONValue), description: '`{object}`: the object as REST shows it, exactly as `GET /events` renders it.' },
    previousAttributes: { type: JSONValue, description: 'For updates, the changed fields’ earlier values.', resolve: (e) => e.previous_attributes ?? null },
  },
});

/**
 * The `types` argument: patterns as REST's `type=` takes them (`order.*`), each naming at least one declared event
 * type (src/model/event-types.ts), so a misspelt type is refused rather than silently matching nothing.
 */
export function checkedTypes(model: CompiledModel, types: readonly string[] | null | undefined): string[] | undefined {
  if (types === null || types === undefined) return undefined;
  const declared = [...eventTypeTable(model).keys()];
  const details: ErrorDetail[] = types.flatMap((t, i) =>
    !TYPE_PATTERN.test(t)
      ? [{ field: `types.${i}`, message: 'must be an event type, * matching any characters (order.*)', value: t }]
      : declared.some((d) => globMatches(t, d))
        ? []
        : [{ field: `types.${i}`, message: 'names no declared event type', value: t }],
  );
  if (types.length > MAX_TYPE_PATTERNS) details.unshift({ field: 'types', message: `takes at most ${MAX_TYPE_PATTERNS} types` });
  if (details.length) throw new AppError('INVALID_QUERY', `The event types asked for are not valid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}.`, { details });
  return types.length ? [...types] : undefined;
}

/** Where a subscription starts: after `Last-Event-ID` (a reconnection: it wins, as on REST) or `after`, else at the head of the log. */
async function startOf(c: Context, after: unknown, types: string[] | undefined): Promise<FeedStart> {
  const resumed = c.lastEventId;
  const request: FeedRequest = { limit: 1, types };
  const afterId = resumed ?? (typeof after === 'string' ? after : undefined);
  if (afterId !== undefined) request.afterId = afterId;
  return c.deps.feed.startStream(c.principal, request, resumed !== undefined ? 'Last-Event-ID' : 'after');
}

type Subscribe = GraphQLFieldResolver<unknown, Context, Record<string, unknown>, Promise<LogSubscription>>;

function everyEvent(model: CompiledModel): Subscribe {
  return async (_root, args, c) => {
    const types = checkedTypes(model, args.types as string[] | null | undefined);
    return new LogSubscription(await startOf(c, args.after, types), types, undefined);
  };
}

/** One object's events: the caller must see the object now (NOT_FOUND otherwise, as `order(id:)`), and the stream carries only its events. */
function objectEvents(model: CompiledModel, r: CompiledResource): Subscribe {
  const read = readOne(r);
  const types = [...eventTypeTable(model).values()].filter((t) => t.resource === r.name).map((t) => t.type);
  return async (root, args, c, info) => {
    const found = (await read(root, args, c, info)) as { record: { id: string } };
    const id = found.record.id;
    const only = (event: StoredEvent): boolean => event.object_id === id && event.resource === r.name;
    return new LogSubscription(await startOf(c, args.after, types), types, only);
  };
}

/** The subscription fields of an app: `events`, and `<resource>Events(id:)` for each served resource that writes events. */
export function subscriptionFields(model: CompiledModel, served: Iterable<CompiledResource>): GraphQLFieldConfigMap<unknown, Context> {
  const version = newestVersion(model);
  const event: GraphQLOutputType = new GraphQLNonNull(EventType);
  // graphql-js executes the selection on each event with the event as the root value.
  const resolve = (root: unknown, _args: unknown, c: Context): EventSource => {
    const stored = root as StoredEvent;
    return { ...c.deps.eventView(stored, version), object_id: stored.object_id, resource: stored.resource };
  };
  const after = { type: GraphQLString, description: 'An event id: start after it (ignored when the request carries `Last-Event-ID`). Without either, only new events.' };
  const fields: GraphQLFieldConfigMap<unknown, Context> = {
    events: {
      type: event,
      description:
        'Every event the caller may see (as `GET /events` with `Accept: text/event-stream`), oldest first, over Server-Sent Events: each `next` carries the event’s id as the SSE `id:`, so a reconnection with `Last-Event-ID` resumes with none lost and none twice.',
      args: {
        after,
        types: {
          type: new GraphQLList(new GraphQLNonNull(GraphQLString)),
          description: `Declared event types, \`*\` matching any characters (\`order.*\`); at most ${MAX_TYPE_PATTERNS}.`,
        },
      },
      subscribe: everyEvent(model),
      resolve,
    },
  };
  for (const r of served) {
    if (!emitsEvents(r)) continue;
    fields[`${singleField(r)}Events`] = {
      type: event,
      description: `The events of one ${r.singular.replace(/_/g, ' ')} the caller may see, as \`events\` carries them.`,
      args: { id: { type: new GraphQLNonNull(GraphQLID) }, after },
      subscribe: objectEvents(model, r),
      resolve,
    };
  }
  return fields;
}
