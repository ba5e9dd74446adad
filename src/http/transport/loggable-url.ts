// Request targets as logs may keep them: the values of credential-like query parameters are replaced.

/**
 * Names whose values are secrets when someone puts them in a URL (OWASP Logging Cheat Sheet: never log
 * session ids, access tokens, passwords, keys). Canon reads none of them from a query, but clients send
 * them anyway, and a logged URL outlives the credential's owner's intent.
 */
const SECRET_NAMES = new Set([
  'api_key',
  'apikey',
  'api-key',
  'x-api-key',
  'key',
  'access_token',
  'id_token',
  'refresh_token',
  'token',
  'password',
  'client_secret',
  'csrf_token',
  'secret',
  'authorization',
  'session',
  'canon_session',
  'code',
]);
/** Any name that says what it holds: `new_password`, `webhook_secret`, `session_token`. */
const SECRET_PART = /password|passwd|secret|token/i;

export const REDACTED = '[REDACTED]';

function secretName(raw: string): boolean {
  let name: string;
  try {
    name = decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    name = raw.toLowerCase();
  }
  return SECRET_NAMES.has(name) || SECRET_PART.test(name);
}

/** The URL with the value of every credential-like query parameter replaced by `[REDACTED]`; the rest as sent. */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const pairs = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && secretName(name) ? `${name}=${REDACTED}` : pair;
    });
  return `${url.slice(0, q)}?${pairs.join('&')}`;
}
