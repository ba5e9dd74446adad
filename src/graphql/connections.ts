// Relay connections over list pages and batched child groups: edges with their cursors, page info, and the total where it is cheap.
import { encodeNext, type ListPlan } from '../query/list-params.js';
import type { Loaded } from '../services/access.js';
import type { ListPages, Page } from '../services/list-pages.js';

/**
 * What a connection field resolves to; the schema's Connection, Edge and PageInfo types read it. Cursors are
 * signed only when a query selects them (an HMAC each).
 */
export interface ConnectionSource {
  rows: Loaded[];
  hasNextPage: boolean;
  /** Whether the page starts after a cursor (Relay's hasPreviousPage may say so when it is cheap: it is). */
  hasPreviousPage: boolean;
  cursorAt(index: number): string;
  /** How many objects the connection has in all, or null where counting would cost a query of its own. */
  totalCount(): Promise<number> | number | null;
}

export interface Edge {
  node: Loaded;
  cursor: () => string;
}

export function edgesOf(source: ConnectionSource): Edge[] {
  return source.rows.map((node, i) => ({ node, cursor: () => source.cursorAt(i) }));
}

/** A page of a list (top-level, or one parent's children read alone); `count` reads the total when asked. */
export function pageConnection(pages: ListPages, page: Page, count: () => Promise<number>): ConnectionSource {
  return {
    rows: page.rows,
    hasNextPage: page.hasMore,
    hasPreviousPage: page.plan.page.style === 'cursor' && page.plan.page.after !== undefined,
    cursorAt: (i) => pages.positionAt(page, i),
    totalCount: count,
  };
}

/**
 * One parent's first children from a batched group read: more follow when the group has more than it shows, the
 * total came with the rows (a window count in the same statement), and cursors are made in `plan()`, the plan
 * of that parent's own connection, so a page after them is read by that connection's `after`.
 */
export function groupConnection(rows: Loaded[], total: number, plan: () => ListPlan, secret: string): ConnectionSource {
  let made: ListPlan | undefined;
  return {
    rows,
    hasNextPage: total > rows.length,
    hasPreviousPage: false,
    cursorAt: (i) => encodeNext((made ??= plan()), rows[i]!.record, undefined, secret),
    totalCount: () => total,
  };
}
