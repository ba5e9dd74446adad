// CanonEvent: an event as Canon renders it on GET /events, on the stream and in webhook bodies (DESIGN §9; the server's src/events/event-view.ts).

/** An object as the server renders it: its fields, `links` included. */
export type EventObject = Record<string, unknown>;

/**
 * One event of the log. `data.object` is the object after the change, rendered in the version named by
 * `api_version` (the release date, e.g. `2026-03-01`); `previous_attributes` holds the fields an update changed,
 * as they were before it. `sequence` is strictly increasing in commit order across the whole store, so a
 * consumer that has handled sequence N can skip anything at or below it.
 */
export interface CanonEvent<TObject extends object = EventObject, TType extends string = string> {
  /** The event id: `Last-Event-ID` on the stream, `webhook-id` on a delivery; deduplicate by it. */
  id: string;
  /** `<resource>.created|updated|deleted` (singular, e.g. `order_item.created`) or an action's own type (`order.paid`). */
  type: TType;
  sequence: number;
  /** When the change committed (ISO 8601). */
  created_at: string;
  /** The release date of the version the payload is rendered in. */
  api_version: string;
  data: { object: TObject };
  previous_attributes?: Partial<TObject>;
  /** Never set on a full event: see {@link ThinCanonEvent}. */
  thin?: undefined;
}

/**
 * A webhook payload over 64 KiB is sent thin (DESIGN §9): no object, only where to fetch it, a path relative to
 * the API's origin (`/v2/products/{id}`) to GET with your credentials. Only webhook deliveries are thin; the
 * stream and `GET /events` always carry the object.
 */
export interface ThinCanonEvent<TType extends string = string> {
  id: string;
  type: TType;
  sequence: number;
  created_at: string;
  api_version: string;
  thin: true;
  data: { object: { id: string; url: string } };
}

/** What a webhook delivery carries: the event, or its thin form. Narrow with `if (event.thin)`. */
export type WebhookEvent<TObject extends object = EventObject, TType extends string = string> = CanonEvent<TObject, TType> | ThinCanonEvent<TType>;
