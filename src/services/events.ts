// Builds the outbox event written in the same transaction as every change (DESIGN §9).
import { v7 as uuidv7 } from 'uuid';
import type { CompiledResource } from '../model/compile.js';
import type { EventRecord, StoredRecord } from '../store/types.js';
import { publicView } from './views.js';

/** `apiVersion`: the release date of the newest version, the shape the payload is stored in. */
export function buildEvent(
  apiVersion: string,
  resource: CompiledResource,
  record: StoredRecord,
  type: string,
  ownerId: string | null,
  now: string,
  previous?: Record<string, unknown>,
): EventRecord {
  return {
    id: uuidv7(),
    type,
    resource: resource.name,
    object_id: record.id,
    owner_id: ownerId,
    // Payloads are stored in the latest shape; the renderer translates them down for older versions.
    api_version: apiVersion,
    created_at: now,
    data: { object: publicView(resource, record) },
    previous_attributes: previous,
  };
}
