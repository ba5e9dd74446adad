// The /api-keys platform resource: admins create keys (secret shown once), bound to a user or acting as admin.
import { defineResource, f } from '../model/define.js';
import type { ResourceDef } from '../model/types.js';
import { API_KEYS, generateApiKey, hashApiKey, keyPrefix } from './api-key-secrets.js';
import { checkVersionPin, versionPinField } from './version-pin.js';

/** `versionDates`: the release dates of the versions served, newest first (the pin's default and its allowed values). */
export function apiKeysResource(users: string, versionDates: readonly string[]): ResourceDef {
  return defineResource({
    name: API_KEYS,
    singular: 'api_key',
    fields: {
      name: f.string({ required: true, minLength: 1, maxLength: 200, sortable: true }),
      user_id: f.uuid({ createOnly: true, filterable: true, references: users, description: 'The user the key acts for; none means an admin key.' }),
      scopes: f.strings({ default: [] }),
      prefix: f.string({ readOnly: true, description: 'The first characters of the secret, to tell keys apart.' }),
      key_hash: f.string({ hidden: true, unique: true }),
      api_version: versionPinField(),
    },
    // Deleting a user deletes its keys; deleting a key revokes it at once.
    belongsTo: [{ resource: users, field: 'user_id', onDelete: 'cascade' }],
    revealed: { key: { description: 'The secret key, shown once in the response that creates it; only its hash is stored.' } },
    permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    // Revoking (deleting) a key, or changing its scopes, reaches every process's key cache at once.
    credentialFields: '*',
    hooks: {
      beforeCreate(values, ctx) {
        checkVersionPin(values, versionDates, 'API key');
        const secret = generateApiKey();
        ctx.reveal.key = secret;
        return { ...values, api_version: values.api_version ?? versionDates[0], key_hash: hashApiKey(secret), prefix: keyPrefix(secret) };
      },
      beforeUpdate(values) {
        checkVersionPin(values, versionDates, 'API key');
        return values;
      },
    },
  });
}
