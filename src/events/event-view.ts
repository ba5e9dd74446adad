// An event as clients see it (DESIGN §9), its object rendered in the version asked for, and the thin form of a delivery too large to send; the event catalog (src/catalog/event-catalog.ts) gives the schema of each.
import type { ApiVersion } from '../model/versions.js';
import { translateDown } from '../model/versions.js';
import type { StoredEvent } from '../store/types.js';

import type { EventView } from '../model/event-shape.js';

export type { EventView };

/**
 * Payloads are stored in the newest shape; an older version sees them translated down like any response
 * (the same change modules), and `api_version` names the release the payload is rendered in.
 */
export function eventView(event: StoredEvent, version: ApiVersion): EventView {
  const object = (event.data.object ?? {}) as Record<string, unknown>;
  const view: EventView = {
    id: event.id,
    type: event.type,
    sequence: event.sequence,
    created_at: event.created_at,
    api_version: version.date,
    data: { object: translateDown(version, event.resource, object) },
  };
  if (event.previous_attributes) view.previous_attributes = translateDown(version, event.resource, event.previous_attributes);
  return view;
}

export interface ThinEventView {
  id: string;
  type: string;
  sequence: number;
  created_at: string;
  api_version: string;
  thin: true;
  data: { object: { id: string; url: string } };
}

/** A delivery past the size bound (DESIGN §9: over 64 KiB is sent thin): id, type and where to fetch the object in `version` (its path as the versioning strategy routes it: `/v2/orders/…`, or `/orders/…` when the version is chosen by header). */
export function thinEventView(event: StoredEvent, version: ApiVersion): ThinEventView {
  return {
    id: event.id,
    type: event.type,
    sequence: event.sequence,
    created_at: event.created_at,
    api_version: version.date,
    thin: true,
    data: { object: { id: event.object_id, url: `${version.prefix}/${event.resource}/${event.object_id}` } },
  };
}
