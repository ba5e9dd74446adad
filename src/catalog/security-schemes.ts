// The ways a request authenticates (DESIGN §8) as named security schemes, and each operation's requirement: API key, bearer JWT, OAuth 2.0 client credentials, mutual TLS, cookie session.
import type { CompiledModel } from '../model/compile.js';
import type { Operation } from './operation.js';

/** OpenAPI 3.1 security scheme objects (§4.8.27), by name. */
export type SecuritySchemes = Record<string, Record<string, unknown>>;

/** Every scope a credential may be given: each resource's read and write, `*`, and the platform's own. */
export function scopesOf(model: CompiledModel, operations: readonly Operation[]): Record<string, string> {
  const scopes: Record<string, string> = { '*': 'Everything the credential’s user may do.' };
  for (const r of model.resources.values()) {
    if (r.def.internal) continue;
    scopes[`${r.name}:read`] = `Read ${r.name}.`;
    scopes[`${r.name}:write`] = `Create, change and delete ${r.name} (reads too).`;
  }
  for (const op of operations) for (const s of op.scopes) scopes[s] ??= `Needed by ${op.id}.`;
  return scopes;
}

/** `sessionCookie`: the session cookie's name under the configuration (`__Host-` prefixed in production). */
export function securitySchemes(model: CompiledModel, operations: readonly Operation[], sessionCookie: string): SecuritySchemes {
  return {
    ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (`ck_…`); its scopes, if any, restrict it.' },
    Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token from `POST /oauth/token` (RFC 6750).' },
    OAuth2: {
      type: 'oauth2',
      description: 'OAuth 2.0 client credentials (RFC 6749 §4.4): the token is sent as a bearer token.',
      flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: scopesOf(model, operations) } },
    },
    MutualTLS: { type: 'mutualTLS', description: 'A client certificate registered on an OAuth client (RFC 8705) authenticates as that client.' },
    Session: {
      type: 'apiKey',
      in: 'cookie',
      name: sessionCookie,
      description: 'A browser session from `POST /sessions`; unsafe methods also need the session’s CSRF token in `X-CSRF-Token` (or the form field `csrf_token`).',
    },
    ClientBasic: { type: 'http', scheme: 'basic', description: 'The OAuth client’s id and secret (RFC 6749 §2.3.1); or `client_id`/`client_secret` form fields.' },
  };
}

/** An operation's security requirement (OpenAPI §4.8.30): any one of the schemes, OAuth2 naming the scopes that suffice. */
export function securityOf(op: Operation): Array<Record<string, string[]>> {
  if (op.authentication === 'none') return [];
  if (op.authentication === 'client') return [{ ClientBasic: [] }, { MutualTLS: [] }];
  const scopes = op.scopes.filter((s) => s !== '*');
  return [{ ApiKey: [] }, { Bearer: [] }, ...(scopes.length ? scopes.map((s) => ({ OAuth2: [s] })) : [{ OAuth2: [] }]), { MutualTLS: [] }, { Session: [] }];
}
