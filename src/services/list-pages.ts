// One page of a collection in any pagination style, as facts (rows, whether more follow, where the next and previous pages start): REST and GraphQL render them in their own names.
import { encodeNext, type ListPlan } from '../query/list-params.js';
import { isKeptPlan } from '../query/plan-memo.js';
import type { ListQuery, Reader } from '../store/types.js';
import type { Loaded } from './access.js';
import type { Ctx, ParentRef, ResourceService } from './resource-service.js';

/**
 * Where a neighbouring page starts, as facts in no transport's names: REST asks for it with `cursor`,
 * `page_token`, `after_id`, `offset` or `page` (src/http/list-response.ts), GraphQL with `after`.
 */
export type PageStart =
  | { style: 'cursor' | 'token'; position: string }
  | { style: 'keyset'; afterId: string }
  | { style: 'offset'; offset: number; limit: number }
  | { style: 'page'; page: number; limit: number };

export interface Page {
  plan: ListPlan;
  /** At most the page size, in order. */
  rows: Loaded[];
  hasMore: boolean;
  /** Offset and page styles: how many match in all. */
  total?: number;
  /** Cursor and token styles: the position after the last row, signed; null when nothing follows. */
  position: string | null;
  /** Where the next and the previous page start, when there are such pages. */
  next?: PageStart;
  prev?: PageStart;
  /** With a search: each row's rank, parallel to `rows` (positions after a row carry it). */
  ranks?: number[];
  /** The store's shared result the rows come from (ResourceService.list), when it is shared. */
  shared?: object;
}

/** Store queries of plans kept by their memo (src/query/plan-memo.ts), frozen: made once per plan, not per request. */
const queries = new WeakMap<ListPlan, ListQuery>();

/** The store query of a plan, kept with a plan a memo keeps (frozen: it cannot change); made anew for any other. */
function storeQueryOf(plan: ListPlan): ListQuery {
  if (!isKeptPlan(plan)) return storeQuery(plan);
  let query = queries.get(plan);
  if (query === undefined) queries.set(plan, (query = Object.freeze(storeQuery(plan))));
  return query;
}

/**
 * The store query of a plan: one row more than the page for the keyset styles, a count for offset and page. Written
 * out per style rather than spread from a shared base: an offset page's plan is new per request (its offset put into
 * the kept plan, src/http/routes/list-plans.ts), and the two object spreads were 8 µs of a random page's CPU.
 */
function storeQuery(plan: ListPlan): ListQuery {
  const { where, orderBy, search } = plan;
  const p = plan.page;
  let query: ListQuery;
  switch (p.style) {
    case 'offset':
    case 'page':
      query = { where, orderBy, limit: p.limit, offset: p.offset, withTotal: true };
      break;
    case 'keyset':
      // One extra row tells whether another page exists without counting the whole set.
      query = p.afterId ? { where, orderBy, limit: p.limit + 1, after: [p.afterId] } : { where, orderBy, limit: p.limit + 1 };
      break;
    default:
      query = p.after ? { where, orderBy, limit: p.limit + 1, after: p.after } : { where, orderBy, limit: p.limit + 1 };
  }
  if (search !== undefined) query.search = search;
  return query;
}

export class ListPages {
  /**
   * Signed positions after frozen records (the list cache shares them), by style, shape and rank: a page
   * polled again signs its next cursor once, not per request (an HMAC each).
   */
  private readonly positions = new WeakMap<object, Map<string, string>>();

  /** `secret` signs the positions of cursors and page tokens. */
  constructor(
    private readonly services: ResourceService,
    private readonly secret: string,
  ) {}

  private positionAfter(plan: ListPlan, last: Loaded, rank: number | undefined): string {
    if (!Object.isFrozen(last.record)) return encodeNext(plan, last.record, rank, this.secret);
    let byKey = this.positions.get(last.record);
    if (byKey === undefined) this.positions.set(last.record, (byKey = new Map()));
    const key = `${plan.page.style} ${plan.shape} ${rank ?? ''}`;
    let position = byKey.get(key);
    if (position === undefined) {
      position = encodeNext(plan, last.record, rank, this.secret);
      if (byKey.size < 8) byKey.set(key, position);
    }
    return position;
  }

  /**
   * The page `plan` asks for, of what `ctx` may see (under `parent` for a nested collection). `reader`: read
   * through this transaction instead of the store (a response rendered inside the change's own transaction).
   */
  async page(ctx: Ctx, resource: string, plan: ListPlan, parent?: ParentRef, reader?: Reader): Promise<Page> {
    const result = await this.services.list(ctx, resource, storeQueryOf(plan), parent, reader);
    const p = plan.page;
    const hasMore = p.style === 'offset' || p.style === 'page' ? p.offset + p.limit < (result.total ?? 0) : result.rows.length > p.limit;
    const rows = result.rows.slice(0, p.limit);
    const last = rows[rows.length - 1];
    const page: Page = {
      plan,
      rows,
      hasMore,
      position: null,
      ...(result.total !== undefined ? { total: result.total } : {}),
      ...(result.shared ? { shared: result.shared } : {}),
      ...(result.ranks ? { ranks: result.ranks } : {}),
    };
    switch (p.style) {
      case 'cursor':
      case 'token':
        if (hasMore && last) {
          page.position = this.positionAfter(plan, last, result.ranks?.[rows.length - 1]);
          page.next = { style: p.style, position: page.position };
        }
        break;
      case 'keyset':
        if (hasMore && last) page.next = { style: 'keyset', afterId: last.record.id };
        break;
      case 'offset':
        if (hasMore) page.next = { style: 'offset', offset: p.offset + p.limit, limit: p.limit };
        if (p.offset > 0) page.prev = { style: 'offset', offset: Math.max(0, p.offset - p.limit), limit: p.limit };
        break;
      case 'page':
        if (hasMore) page.next = { style: 'page', page: p.page + 1, limit: p.limit };
        if (p.page > 1) page.prev = { style: 'page', page: p.page - 1, limit: p.limit };
        break;
    }
    return page;
  }

  /**
   * The signed position after the row at `index` of a cursor or token page: where a page starting after that
   * row begins (a GraphQL edge's cursor). The last row's is `page.position` when more follow.
   */
  positionAt(page: Page, index: number): string {
    const row = page.rows[index];
    if (!row) throw new RangeError(`the page has no row ${index}`);
    return this.positionAfter(page.plan, row, page.ranks?.[index]);
  }
}
