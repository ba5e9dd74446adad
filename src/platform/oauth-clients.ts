// The /oauth-clients platform resource: admins register clients (secret shown once), with scopes and an optional certificate.
import { defineResource, f } from '../model/define.js';
import type { ResourceDef } from '../model/types.js';
import { digest, randomSecret } from '../lib/secrets.js';
import { checkVersionPin, versionPinField } from './version-pin.js';

export const OAUTH_CLIENTS = 'oauth-clients';

/** `versionDates`: the release dates of the versions served, newest first (the pin's default and its allowed values). */
export function oauthClientsResource(versionDates: readonly string[]): ResourceDef {
  return defineResource({
    name: OAUTH_CLIENTS,
    singular: 'oauth_client',
    fields: {
      name: f.string({ required: true, minLength: 1, maxLength: 200, sortable: true }),
      scopes: f.strings({ default: [], description: 'Scopes tokens of this client may carry; none means unrestricted.' }),
      // RFC 8705 §2.1.2 style binding: the SHA-256 of the client's DER certificate, lowercase hex.
      certificate_sha256: f.string({ pattern: '^[0-9a-f]{64}$', unique: true, filterable: true }),
      client_id: f.string({ readOnly: true, unique: true, filterable: true }),
      secret_hash: f.string({ hidden: true }),
      api_version: versionPinField(),
    },
    revealed: { client_secret: { description: 'The client secret, shown once in the response that creates it; only its hash is stored.' } },
    permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    // Deleting a client ends its tokens at once; narrowing its scopes narrows them.
    credentialFields: '*',
    hooks: {
      beforeCreate(values, ctx) {
        checkVersionPin(values, versionDates, 'OAuth client');
        const secret = randomSecret('cs_');
        ctx.reveal.client_secret = secret;
        return { ...values, api_version: values.api_version ?? versionDates[0], client_id: randomSecret('cid_', 16), secret_hash: digest(secret) };
      },
      beforeUpdate(values) {
        checkVersionPin(values, versionDates, 'OAuth client');
        return values;
      },
    },
  });
}
