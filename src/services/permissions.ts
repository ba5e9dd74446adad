// Pure permission decisions from the model's grants: by role, by ownership, or for any authenticated principal.
import type { Principal } from '../model/principal.js';
import type { CompiledModel, CompiledResource } from '../model/compile.js';
import type { Grant } from '../model/types.js';
import type { Condition, StoredRecord } from '../store/types.js';

export interface GrantCheck {
  /** Granted whatever the object: by role or to any authenticated principal. */
  all: boolean;
  /** Granted for objects the principal owns. */
  owner: boolean;
}

export function grantFor(principal: Principal, grants: Grant[]): GrantCheck {
  return {
    all: grants.includes('authenticated') || grants.includes(principal.role),
    owner: grants.includes('owner') && principal.userId !== null,
  };
}

export function none(g: GrantCheck): boolean {
  return !g.all && !g.owner;
}

/** The condition restricting a list to what the principal owns. */
export function ownerCondition(model: CompiledModel, resource: CompiledResource, principal: Principal): Condition {
  const o = resource.def.ownership;
  if (!o || principal.userId === null) return { path: 'id', op: 'in', value: [] };
  if ('through' in o) {
    return { path: o.field, op: 'owned_via', parent: o.through, parentField: directOwnerField(model, o.through), value: principal.userId };
  }
  return { path: o.field, op: 'eq', value: principal.userId };
}

/** Ownership through a parent is decided by the parent's own direct ownership field. */
export function directOwnerField(model: CompiledModel, resource: string): string {
  const o = model.resources.get(resource)?.def.ownership;
  if (!o || 'through' in o) throw new Error(`ownership through ${resource} needs ${resource} to have direct ownership`);
  return o.field;
}

/** Direct ownership, decidable from the record alone; null when ownership goes through a parent. */
export function ownsDirectly(resource: CompiledResource, record: StoredRecord, principal: Principal): boolean | null {
  const o = resource.def.ownership;
  if (!o) return false;
  if ('through' in o) return null;
  return principal.userId !== null && record[o.field] === principal.userId;
}

/**
 * Scopes (DESIGN §8): none means unrestricted; otherwise `*`, `{resource}:write` (which covers
 * reading) or `{resource}:read` must be among them.
 */
export function scopeAllows(scopes: string[], resource: string, access: 'read' | 'write'): boolean {
  if (scopes.length === 0 || scopes.includes('*') || scopes.includes(`${resource}:write`)) return true;
  return access === 'read' && scopes.includes(`${resource}:read`);
}

/**
 * Whether a principal holds a platform scope (src/platform/platform-scopes.ts, such as `metrics:read`): a
 * credential that lists it holds it whatever its role; an admin holds every one while its credential is
 * unrestricted (no scopes, or `*`). Anyone else (a customer's session or key) does not.
 */
export function holdsPlatformScope(principal: Principal, scope: string): boolean {
  if (principal.scopes.includes(scope)) return true;
  return principal.role === 'admin' && (principal.scopes.length === 0 || principal.scopes.includes('*'));
}
