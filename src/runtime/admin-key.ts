// Makes sure an admin API key with a known secret exists: CANON_ADMIN_API_KEY, or a generated one in development.
import { v7 as uuidv7 } from 'uuid';
import { API_KEYS, hashApiKey, keyPrefix } from '../platform/api-key-secrets.js';
import { newestVersion, type CompiledModel } from '../model/compile.js';
import { buildEvent } from '../services/events.js';
import { SYSTEM } from '../model/principal.js';
import type { ResourceService } from '../services/resource-service.js';
import { UniqueViolation, type StoredRecord } from '../store/types.js';

/**
 * Inserts the key unless a key with this secret exists; returns whether it was created. Through the
 * services' commit path, so its event reaches the fan-out after the commit like every other. Processes starting at
 * once on one PostgreSQL database may each find no key (READ COMMITTED) and insert it: the unique index on its hash
 * lets one commit, and for the others the key exists, as asked (seen as a failed start of one process in four).
 */
export async function ensureAdminKey(services: ResourceService, model: CompiledModel, secret: string, name: string, now: string): Promise<boolean> {
  try {
    return await insertUnlessPresent(services, model, secret, name, now);
  } catch (err) {
    if (err instanceof UniqueViolation && err.resource === API_KEYS && err.field === 'key_hash') return false;
    throw err;
  }
}

function insertUnlessPresent(services: ResourceService, model: CompiledModel, secret: string, name: string, now: string): Promise<boolean> {
  const hash = hashApiKey(secret);
  return services.transact(SYSTEM, async (_ctx, tx) => {
    if (await tx.findOne(API_KEYS, [{ path: 'key_hash', op: 'eq', value: hash }])) return false;
    const record: StoredRecord = {
      id: uuidv7(),
      version: 1,
      created_at: now,
      updated_at: now,
      name,
      user_id: null,
      scopes: [],
      prefix: keyPrefix(secret),
      key_hash: hash,
    };
    await tx.insert(API_KEYS, record);
    await tx.appendEvent(buildEvent(newestVersion(model).date, model.resources.get(API_KEYS)!, record, 'api_key.created', null, now));
    return true;
  });
}
