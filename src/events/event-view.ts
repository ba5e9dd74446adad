// An event as clients see it (DESIGN §9), its object rendered in the version asked for, as JSON text rendered once per version.
import type { ApiVersion } from '../model/versions.js';
import { translateDown } from '../model/versions.js';
import type { StoredEvent } from '../store/types.js';

export interface EventView {
  id: string;
  type: string;
  sequence: number;
  created_at: string;
  api_version: string;
  data: { object: Record<string, unknown> };
  previous_attributes?: Record<string, unknown>;
}

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
