// Collections as async iterables (DESIGN §6, §7): the first page in the style asked for, then each `next` link the server gives until there is none.

/** The five pagination styles of DESIGN §6 (`x-canon-pagination` in the documents). */
export type PageStyle = 'cursor' | 'offset' | 'page' | 'token' | 'keyset';

export type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;

/** What `list(params)` takes besides the REST query: the style to page in; `limit` is then the page size in any style. */
export interface PagingOptions {
  style?: PageStyle;
}

/** The parameter each style takes the page size in (DESIGN §6). */
const SIZE: Record<PageStyle, string> = { cursor: 'limit', offset: 'limit', page: 'per_page', token: 'page_size', keyset: 'limit' };
/** Below and above every UUID: keyset's first page, ascending or descending (the server pages by `after_id`, a UUID). */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
/** The server's default page size (DESIGN §6), named when the token style needs a parameter to be recognised. */
const DEFAULT_PAGE_SIZE = 20;

/**
 * The query of the first page. Without `style` the parameters are sent as given and the server picks the style
 * from them (cursor when none). With `style`, `limit` moves to that style's size parameter and the style's marker
 * is added: `offset=0`, `page=1`, `page_size`, or keyset's `after_id` below every id (above, for `sort=-id`).
 */
export function firstPageQuery(params: Record<string, QueryValue> & PagingOptions): Record<string, QueryValue> {
  const { style, ...query } = params;
  if (style === undefined) return query;
  if (!(style in SIZE)) throw new TypeError(`style must be one of ${Object.keys(SIZE).join(', ')}, not ${String(style)}`);
  const size = query.limit;
  delete query.limit;
  if (size !== undefined) query[SIZE[style]] = size;
  if (style === 'offset') query.offset ??= 0;
  else if (style === 'page') query.page ??= 1;
  else if (style === 'token' && query.page_token === undefined) query.page_size ??= DEFAULT_PAGE_SIZE;
  else if (style === 'keyset') query.after_id ??= String(query.sort ?? '').startsWith('-') ? MAX_UUID : NIL_UUID;
  return query;
}

/** A query string (`?a=1&b=x,y`): lists are comma-joined (`id[in]`, `fields`, DESIGN §6), undefined and null left out. */
export function queryString(query: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.append(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

interface PageLinks {
  links?: ReadonlyArray<{ rel?: string; href?: string }>;
}

/** An async iterable over a collection's items, page after page; `pages()` iterates the pages themselves. */
export class Listing<T, P> implements AsyncIterable<T> {
  constructor(
    private readonly load: (url: string) => Promise<P>,
    private readonly first: string,
  ) {}

  /** Every page, from the first, following each page's `next` link (RFC 8288 relation in `links`) until there is none. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let url: string | undefined = this.first;
    while (url !== undefined) {
      const page: P = await this.load(url);
      yield page;
      const next = (page as PageLinks).links?.find((l) => l.rel === 'next')?.href;
      if (next === url) throw new Error(`the page at ${url} links to itself as next`);
      url = next;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* (page as { data: T[] }).data;
  }
}
