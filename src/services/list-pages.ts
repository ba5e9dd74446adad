// One page of a collection in any pagination style, as facts (rows, whether more follow, the parameters of the next and previous pages): REST renders them, GraphQL will too.
import { encodeNext, type ListPlan } from '../query/list-params.js';
import type { ListQuery } from '../store/types.js';
import type { Loaded } from './access.js';
import type { Ctx, ParentRef, ResourceService } from './resource-service.js';

export interface Page {
  plan: ListPlan;
  /** At most the page size, in order. */
  rows: Loaded[];
  hasMore: boolean;
  /** Offset and page styles: how many match in all. */
  total?: number;
  /** Cursor and token styles: the position after the last row, signed; null when nothing follows. */
  position: string | null;
  /** The query parameters that ask for the next and the previous page, when there are such pages. */
  next?: Record<string, string>;
  prev?: Record<string, string>;
  /** The store's shared result the rows come from (ResourceService.list), when it is shared. */
  shared?: object;
}

/** The store query of a plan: one row more than the page for the keyset styles, a count for offset and page. */
function storeQuery(plan: ListPlan): ListQuery {
  const base = { where: plan.where, orderBy: plan.orderBy, ...(plan.search !== undefined ? { search: plan.search } : {}) };
  const p = plan.page;
  switch (p.style) {
    case 'offset':
    case 'page':
      return { ...base, limit: p.limit, offset: p.offset, withTotal: true };
    case 'keyset':
      // One extra row tells whether another page exists without counting the whole set.
      return { ...base, limit: p.limit + 1, ...(p.afterId ? { after: [p.afterId] } : {}) };
    default:
      return { ...base, limit: p.limit + 1, ...(p.after ? { after: p.after } : {}) };
  }
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

  /** The page `plan` asks for, of what `ctx` may see (under `parent` for a nested collection). */
  async page(ctx: Ctx, resource: string, plan: ListPlan, parent?: ParentRef): Promise<Page> {
    const result = await this.services.list(ctx, resource, storeQuery(plan), parent);
    const p = plan.page;
    const hasMore = p.style === 'offset' || p.style === 'page' ? p.offset + p.limit < (result.total ?? 0) : result.rows.length > p.limit;
    const rows = result.rows.slice(0, p.limit);
    const last = rows[rows.length - 1];
    const page: Page = { plan, rows, hasMore, position: null, ...(result.total !== undefined ? { total: result.total } : {}), ...(result.shared ? { shared: result.shared } : {}) };
    switch (p.style) {
      case 'cursor':
      case 'token':
        if (hasMore && last) {
          page.position = this.positionAfter(plan, last, result.ranks?.[rows.length - 1]);
          page.next = p.style === 'cursor' ? { cursor: page.position } : { page_token: page.position };
        }
        break;
      case 'keyset':
        if (hasMore && last) page.next = { after_id: last.record.id };
        break;
      case 'offset':
        if (hasMore) page.next = { offset: String(p.offset + p.limit), limit: String(p.limit) };
        if (p.offset > 0) page.prev = { offset: String(Math.max(0, p.offset - p.limit)), limit: String(p.limit) };
        break;
      case 'page':
        if (hasMore) page.next = { page: String(p.page + 1), per_page: String(p.limit) };
        if (p.page > 1) page.prev = { page: String(p.page - 1), per_page: String(p.limit) };
        break;
    }
    return page;
  }
}
