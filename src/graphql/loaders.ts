// Per-request batch loaders (dataloader): objects by id and the children of many parents, each batch one statement under the caller's visibility (issue 29.4).
import DataLoader from 'dataloader';
import { isAppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import type { Loaded } from '../services/access.js';
import type { ChildGroup, GroupRequest } from '../services/visible-batches.js';
import type { Reader } from '../store/types.js';
import type { EngineServices } from './engine-services.js';

/** Ids per batch: the store reads at most 1000 at once (Reader.getMany, listGroups). */
const MAX_BATCH = 500;

const NO_CHILDREN: ChildGroup = Object.freeze({ rows: [], total: 0 }) as ChildGroup;

export class Loaders {
  private readonly objects = new Map<string, DataLoader<string, Loaded | null>>();
  private readonly groups = new Map<string, DataLoader<string, ChildGroup>>();

  constructor(
    private readonly deps: EngineServices,
    private readonly principal: Principal,
    private readonly reader: Reader | undefined,
  ) {}

  /**
   * Objects of `resource` by id, as the caller may see them (null: none, or not the caller's to see). A batch of
   * one is a GET by id (the store's read cache answers a warm one); more are one statement (getManyVisible).
   */
  object(resource: string): DataLoader<string, Loaded | null> {
    let loader = this.objects.get(resource);
    if (!loader) {
      loader = new DataLoader(
        async (ids) => {
          if (ids.length === 1 && this.reader === undefined) return [await this.one(resource, ids[0]!)];
          return this.deps.batches.getManyVisible(this.principal, resource, ids, this.reader);
        },
        { maxBatchSize: MAX_BATCH },
      );
      this.objects.set(resource, loader);
    }
    return loader;
  }

  /** A GET by id: 404 is null here (a relation to an object the caller may not see is empty); other refusals throw. */
  private async one(resource: string, id: string): Promise<Loaded | null> {
    try {
      return await this.deps.services.get({ principal: this.principal }, resource, id);
    } catch (err) {
      if (isAppError(err) && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  /**
   * The children in `resource` of many parents (`field` names the parent), each parent's first rows as `request`
   * asks: one statement per batch. `key` tells apart requests with other filters, order or size.
   */
  children(resource: string, field: string, key: string, request: GroupRequest): DataLoader<string, ChildGroup> {
    const name = `${resource}\n${field}\n${key}`;
    let loader = this.groups.get(name);
    if (!loader) {
      loader = new DataLoader(
        async (parents) => {
          const found = await this.deps.batches.listGroups(this.principal, resource, field, parents, request, this.reader);
          return parents.map((id) => found.get(id) ?? NO_CHILDREN);
        },
        { maxBatchSize: MAX_BATCH },
      );
      this.groups.set(name, loader);
    }
    return loader;
  }
}
