// Builds the outbox event written in the same transaction as every change (DESIGN §9).
import { v7 as uuidv7 } from 'uuid';
import type { CompiledResource } from '../model/compile.js';
import { CURRENT_VERSION } from '../model/versions.js';
import type { EventRecord, StoredRecord } from '../store/types.js';
import { publicView } from './views.js';

export function buildEvent(
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
    api_version: CURRENT_VERSION.date,
    created_at: now,
    data: { object: publicView(resource, record) },
    previous_attributes: previous,
  };
}
