// Counts requests per API version, and per principal for deprecated versions, so an operator sees who still has to migrate (/metrics).
import type { Principal } from '../model/principal.js';
import type { ApiVersion } from '../model/versions.js';
import type { HttpDeps } from './deps.js';

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

/** Labels by principal object: a cached credential resolves to the same object request after request. */
const labels = new WeakMap<Principal, string>();

export function countVersion(deps: Pick<HttpDeps, 'metrics'>, version: ApiVersion, principal: Principal): void {
  if (!version.deprecation) {
    deps.metrics.versionRequest(version.name, false, '');
    return;
  }
  let label = labels.get(principal);
  if (label === undefined) labels.set(principal, (label = principalLabel(principal)));
  deps.metrics.versionRequest(version.name, true, label);
}
