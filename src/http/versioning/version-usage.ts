// Counts requests per API version (/metrics) and logs who still calls a deprecated one, so an operator sees who has to migrate.
import type { Logger } from 'pino';
import type { Principal } from '../../model/principal.js';
import type { ApiVersion } from '../../model/versions.js';
import type { HttpDeps } from '../deps.js';

/** A stable name for who made a request: the credential, or for a cookie session its user (a session id would change at every login). */
export function principalLabel(p: Principal): string {
  switch (p.kind) {
    case 'api_key':
      return `api_key:${p.credentialId}`;
    case 'bearer':
    case 'client_certificate':
      return `oauth_client:${p.credentialId}`;
    case 'session':
      return `user:${p.userId ?? p.credentialId}`;
    default:
      return p.kind;
  }
}

/** A caller of a deprecated version is logged at most once per this interval and process. */
export const DEPRECATED_LOG_INTERVAL_MS = 3_600_000;
/** Callers remembered per process; past it the memory starts afresh (a few more log lines, never more memory). */
const REMEMBERED_CALLERS = 10_000;

/** Labels by principal object: a cached credential resolves to the same object request after request. */
const labels = new WeakMap<Principal, string>();
/** When each caller of a deprecated version was last logged, per runtime (keyed by its metrics). */
const lastLogged = new WeakMap<object, Map<string, number>>();

/**
 * Counts the request in /metrics by version only (issue 26.5: no label names a principal, so the series stay
 * bounded and scraping reveals no credential ids); a deprecated version's caller goes to the log instead, once
 * an hour per caller: `{"api_version":"v1","principal":"api_key:<id>","msg":"deprecated API version in use"}`.
 */
export function countVersion(deps: Pick<HttpDeps, 'metrics'> & { log: Pick<Logger, 'info'> }, version: ApiVersion, principal: Principal): void {
  if (!version.deprecation) {
    deps.metrics.versionRequest(version.name, false);
    return;
  }
  deps.metrics.versionRequest(version.name, true);
  let label = labels.get(principal);
  if (label === undefined) labels.set(principal, (label = principalLabel(principal)));
  let seen = lastLogged.get(deps.metrics);
  if (seen === undefined) lastLogged.set(deps.metrics, (seen = new Map()));
  const key = `${version.name} ${label}`;
  const now = Date.now();
  const at = seen.get(key);
  if (at !== undefined && now - at < DEPRECATED_LOG_INTERVAL_MS) return;
  if (at === undefined && seen.size >= REMEMBERED_CALLERS) seen.clear();
  seen.set(key, now);
  deps.log.info({ api_version: version.name, principal: label }, 'deprecated API version in use');
}
