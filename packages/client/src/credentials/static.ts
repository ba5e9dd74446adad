// The credentials that need no exchange: an API key (`X-API-Key`) and a bearer token the caller obtained itself (DESIGN §8).
import type { Credential } from '../transport.js';

/** An API key (`ck_…`), sent in the header the server reads (DESIGN §8). */
export function apiKeyCredential(key: string): Credential {
  if (typeof key !== 'string' || key === '') throw new TypeError('apiKey must be a non-empty string');
  const headers = { 'x-api-key': key };
  return { headers: () => headers };
}

/** A bearer token (RFC 6750 §2.1): a string, or a function asked before every try (for tokens the caller renews). */
export function bearerCredential(token: string | (() => string | Promise<string>)): Credential {
  if (typeof token === 'string') {
    if (token === '') throw new TypeError('token must be a non-empty string');
    const headers = { authorization: `Bearer ${token}` };
    return { headers: () => headers };
  }
  if (typeof token !== 'function') throw new TypeError('token must be a string or a function returning one');
  return { headers: async () => ({ authorization: `Bearer ${await token()}` }) };
}
