// Batched reads under the caller's visibility (issue 29.1): many objects by id, and the first children of many parents, each in one statement, with the rules of a GET by id and of a nested list.
import type { Principal } from '../model/principal.js';
import { resourceOf, type CompiledModel, type CompiledResource } from '../model/compile.js';
import { UUID_PATTERN } from '../lib/uuid.js';
import type { Condition, Reader, SortKey, Store, StoredRecord } from '../store/types.js';
import { accessFor, ownershipMatters, type Loaded } from './access.js';
import { directOwnerField, ownerCondition, ownsDirectly, type GrantCheck } from './permissions.js';
import { readGrant, requireScope } from './refusals.js';

/** The children of many parents as VisibleBatches.listGroups gives them: each parent's first rows, and how many it has in all. */
export interface ChildGroup {
  rows: Loaded[];
  total: number;
}

/** What listGroups reads of each parent's children: filters, their order (ending with `id`) and how many. */
export interface GroupRequest {
  where: Condition[];
  orderBy: SortKey[];
  limit: number;
}

export class VisibleBatches {
  constructor(
    private readonly store: Store,
    private readonly model: CompiledModel,
  ) {}

  /**
   * The objects of `resource` with these ids as the principal may see them, parallel to `ids`: null for an id
   * that names nothing or an object it may not see (a GET by id would be 404 for both, so existence never
   * leaks). Refusals that do not depend on the object (the scope, no read grant at all) throw, as a GET does.
   * One statement for all ids: by id when the principal reads every object, with its ownership as a
   * condition when it reads only its own (through a parent too). `reader`: a transaction to read through.
   */
  async getManyVisible(principal: Principal, resource: string, ids: readonly string[], reader: Reader = this.store): Promise<Array<Loaded | null>> {
    const r = resourceOf(this.model, resource);
    requireScope(principal, r, 'read');
    const g = readGrant(principal, r);
    const wanted = [...new Set(ids.map((id) => id.toLowerCase()).filter((id) => UUID_PATTERN.test(id)))];
    if (wanted.length === 0) return ids.map(() => null);
    const records = g.all
      ? await reader.getMany(r.name, wanted)
      : (
          await reader.list(r.name, {
            where: [{ path: 'id', op: 'in', value: wanted }, ownerCondition(this.model, r, principal)],
            orderBy: [{ path: 'id', desc: false }],
            limit: wanted.length,
          })
        ).rows;
    const loaded = await this.withAccess(r, principal, g, records, reader);
    const byId = new Map(loaded.map((l) => [l.record.id, l]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  }

  /**
   * The children in `resource` of many parents at once (`field` names the parent), each parent's first
   * `request.limit` the principal may see, in one statement: by parent id (as text), a parent without any
   * absent. The parents are ones the caller has read under its own visibility (a relation from a visible
   * object); the children are restricted as a nested list restricts them (the scope, the read grant, the
   * caller's own objects where it reads only those).
   */
  async listGroups(
    principal: Principal,
    resource: string,
    field: string,
    parentIds: readonly string[],
    request: GroupRequest,
    reader: Reader = this.store,
  ): Promise<Map<string, ChildGroup>> {
    const r = resourceOf(this.model, resource);
    requireScope(principal, r, 'read');
    const g = readGrant(principal, r);
    const where = g.all ? request.where : [...request.where, ownerCondition(this.model, r, principal)];
    const groups = await reader.listGroups(r.name, { field, values: parentIds, where, orderBy: request.orderBy, limit: request.limit });
    const out = new Map<string, ChildGroup>();
    for (const [key, group] of groups) out.set(key, { rows: await this.withAccess(r, principal, g, group.rows, reader), total: group.total });
    return out;
  }

  /**
   * What the principal may do with each record (the links REST shows; access decisions). Ownership is looked
   * up only where it could change that: not when only owned records were read, not when every grant comes
   * from the role; through a parent, all parents in one read.
   */
  private async withAccess(r: CompiledResource, principal: Principal, g: GrantCheck, records: StoredRecord[], reader: Reader): Promise<Loaded[]> {
    if (!g.all || !ownershipMatters(r, principal)) return records.map((record) => ({ record, access: accessFor(r, record, principal, !g.all) }));
    const o = r.def.ownership;
    if (!o || !('through' in o)) return records.map((record) => ({ record, access: accessFor(r, record, principal, ownsDirectly(r, record, principal) === true) }));
    const parentIds = [...new Set(records.map((record) => record[o.field]).filter((v): v is string => typeof v === 'string'))];
    const ownerField = directOwnerField(this.model, o.through);
    const owners = new Map((await reader.getMany(o.through, parentIds)).map((p) => [p.id, p[ownerField]]));
    return records.map((record) => ({ record, access: accessFor(r, record, principal, owners.get(String(record[o.field])) === principal.userId) }));
  }
}
