// Headers every response carries, whichever path sends it: Fastify's, the lean read path, or Node's framing errors.
import type { Config } from '../../config/config.js';

/** RFC 6797 §6.1: a year, this host and its subdomains; CANON_HSTS replaces the whole value. */
export const DEFAULT_HSTS = 'max-age=31536000; includeSubDomains';

/**
 * `X-Content-Type-Options: nosniff` always: no browser may read a JSON body (or an error) as HTML or
 * script. `Strict-Transport-Security` when the server speaks HTTPS itself, or in production, where it sits
 * behind a TLS-terminating proxy (browsers ignore the header on plain HTTP, RFC 6797 §8.1, so it costs
 * nothing where TLS is absent); `CANON_HSTS=off` or a value of its own overrides that.
 */
export function securityHeaders(config: Pick<Config, 'hsts' | 'production' | 'tls'>): Record<string, string> {
  const headers: Record<string, string> = { 'x-content-type-options': 'nosniff' };
  const hsts = config.hsts === 'auto' ? (config.production || config.tls ? DEFAULT_HSTS : undefined) : config.hsts === 'off' ? undefined : config.hsts;
  if (hsts) headers['strict-transport-security'] = hsts;
  return headers;
}

/** The same headers as raw `Name: value\r\n` lines, for responses written straight to a socket. */
export function rawHeaderLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
}
