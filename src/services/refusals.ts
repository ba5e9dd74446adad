// The refusals every read and write of a resource starts with, shared by the use cases (scope, then the read grant).
import { AppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import type { CompiledResource } from '../model/compile.js';
import { grantFor, none, scopeAllows, type GrantCheck } from './permissions.js';

/** Refuses a request its credential's scopes do not cover (403, with the scope needed, RFC 6750 §3.1). */
export function requireScope(principal: Principal, r: CompiledResource, access: 'read' | 'write'): void {
  if (scopeAllows(principal.scopes, r.name, access)) return;
  const scope = `${r.name}:${access}`;
  throw new AppError('INSUFFICIENT_SCOPE', `This credential lacks the scope ${scope}.`, {
    facts: { challenges: [{ scheme: 'Bearer', params: { realm: 'canon', error: 'insufficient_scope', scope } }] },
  });
}

/** The principal's read grant on `r`; a principal with none is refused outright (403), before anything is read. */
export function readGrant(principal: Principal, r: CompiledResource): GrantCheck {
  const g = grantFor(principal, r.def.permissions.read);
  if (none(g)) throw new AppError('FORBIDDEN', `You may not read ${r.name}.`);
  return g;
}
