// Internal platform resources (no routes, no events): cookie sessions and the keys that sign bearer tokens.
import { defineResource, f } from '../model/define.js';
import type { ResourceDef } from '../model/types.js';

export const SESSIONS = 'sessions';
export const SIGNING_KEYS = 'signing-keys';

const ADMIN_ONLY = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };

/** The server-side session record of the specification (§2): user, roles, timestamps and free data. */
export function sessionsResource(users: string): ResourceDef {
  return defineResource({
    name: SESSIONS,
    singular: 'session',
    internal: true,
    fields: {
      // Only a digest of the 256-bit id is stored: a leaked table does not log anyone in.
      id_hash: f.string({ hidden: true, unique: true }),
      user_id: f.uuid({ required: true, filterable: true, references: users }),
      roles: f.strings({ default: [] }),
      last_accessed: f.timestamp({ required: true }),
      expires_at: f.timestamp({ required: true }),
      csrf_token: f.string({ hidden: true }),
      data: f.object({ default: {} }),
    },
    belongsTo: [{ resource: users, field: 'user_id', onDelete: 'cascade' }],
    permissions: ADMIN_ONLY,
  });
}

export function signingKeysResource(): ResourceDef {
  return defineResource({
    name: SIGNING_KEYS,
    singular: 'signing_key',
    internal: true,
    fields: {
      kid: f.string({ required: true, unique: true }),
      alg: f.string({ required: true }),
      public_jwk: f.object({ required: true }),
      /** The private JWK, AES-256-GCM encrypted with a key derived from CANON_SECRET. */
      private_jwk: f.string({ hidden: true }),
      retired_at: f.timestamp({ filterable: true }),
    },
    permissions: ADMIN_ONLY,
  });
}
