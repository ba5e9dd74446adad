// Ownership and per-object access: who owns a record (through parents too) and which links a principal may follow.
import type { Principal } from '../model/principal.js';
import type { CompiledModel, CompiledResource } from '../model/compile.js';
import { actionAvailable } from '../model/state-rule.js';
import type { Reader, StoredRecord } from '../store/types.js';
import { directOwnerField, grantFor, ownsDirectly } from './permissions.js';

/** A record together with what the caller may do with it. */
export interface Loaded {
  record: StoredRecord;
  access: Access;
}

/** What the principal may do with one object; the renderer turns it into links. */
export interface Access {
  update: boolean;
  delete: boolean;
  /** Action names allowed to this principal in the object's current state (the state rule: `when`, and no operation in flight for a POST). */
  actions: string[];
}

/** The user id owning `record`, following ownership through a parent when declared so. */
export async function ownerOf(model: CompiledModel, resource: CompiledResource, record: StoredRecord, reader: Reader): Promise<string | null> {
  const o = resource.def.ownership;
  if (!o) return null;
  const value = (record[o.field] as string | null) ?? null;
  if (!('through' in o)) return value;
  if (value === null) return null;
  const parent = await reader.get(o.through, value);
  return parent ? ((parent[directOwnerField(model, o.through)] as string | null) ?? null) : null;
}

export async function owns(model: CompiledModel, resource: CompiledResource, record: StoredRecord, principal: Principal, reader: Reader): Promise<boolean> {
  const known = ownsKnown(resource, record, principal);
  if (known !== null) return known;
  return (await ownerOf(model, resource, record, reader)) === principal.userId;
}

/** Whether the principal owns `record`, when the record alone decides it; null when ownership goes through a parent that must be read. */
export function ownsKnown(resource: CompiledResource, record: StoredRecord, principal: Principal): boolean | null {
  if (principal.userId === null) return false;
  return ownsDirectly(resource, record, principal);
}

/**
 * Whether owning an object could change what this principal may do with it: false when every
 * update, delete and action grant it holds comes from its role, so no ownership lookup is needed.
 */
export function ownershipMatters(resource: CompiledResource, principal: Principal): boolean {
  const grants = [resource.def.permissions.update, resource.def.permissions.delete, ...Object.values(resource.def.actions ?? {}).map((a) => a.allow)];
  return (
    principal.userId !== null &&
    grants.some((g) => {
      const c = grantFor(principal, g);
      return !c.all && c.owner;
    })
  );
}

export function accessFor(resource: CompiledResource, record: StoredRecord, principal: Principal, owned: boolean): Access {
  const allowed = (grants: string[]): boolean => {
    const g = grantFor(principal, grants);
    return g.all || (g.owner && owned);
  };
  const actions: string[] = [];
  for (const [name, action] of Object.entries(resource.def.actions ?? {})) {
    if (allowed(action.allow) && actionAvailable(action, record)) actions.push(name);
  }
  return { update: allowed(resource.def.permissions.update), delete: allowed(resource.def.permissions.delete), actions };
}
