// The list-parameter table (DESIGN §6): every pagination style with its parameters and bounds, read by the query parser and by the catalog that documents it.

/** Page size when the request names none. */
export const DEFAULT_LIMIT = 20;
/** The largest page a request may ask for; more is 400 (spec §4: nothing returns an unbounded set). */
export const MAX_LIMIT = 100;
/** Offsets past this are refused: an offset page costs what it skips, so deep pages belong to cursors. */
export const MAX_OFFSET = 1_000_000;
/** At most this many values in one `field[in]=a,b,…` filter. */
export const MAX_IN = 100;
/** The longest free-text search `q`. */
export const MAX_SEARCH = 200;

export type PageStyle = 'cursor' | 'offset' | 'page' | 'token' | 'keyset';

/** A query parameter of a collection, as documented and as parsed. */
export interface ListParameter {
  name: string;
  schema: Record<string, unknown>;
  description: string;
}

const SIZE = { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT };

/** The parameters of each style, in the order a client sends them; `limit` is shared by cursor, offset and keyset. */
export const PAGINATION_STYLES: Record<PageStyle, { params: ListParameter[]; envelope: string; description: string }> = {
  cursor: {
    params: [
      { name: 'limit', schema: SIZE, description: `Page size (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
      { name: 'cursor', schema: { type: 'string' }, description: 'An opaque, tamper-evident position from `pagination.next_cursor`; a forged or stale one is 400.' },
    ],
    envelope: '`pagination: {next_cursor, has_more}`',
    description: 'The default: opaque cursors, the same cost at any depth.',
  },
  offset: {
    params: [
      { name: 'offset', schema: { type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0 }, description: `Rows to skip (at most ${MAX_OFFSET}).` },
      { name: 'limit', schema: SIZE, description: `Page size (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
    ],
    envelope: '`pagination: {offset, limit, total}`',
    description: 'Offset and limit, with the total.',
  },
  page: {
    params: [
      { name: 'page', schema: { type: 'integer', minimum: 1, default: 1 }, description: `Page number from 1 (pages past offset ${MAX_OFFSET} are refused).` },
      { name: 'per_page', schema: SIZE, description: `Page size (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
    ],
    envelope: '`pagination: {page, per_page, total}`',
    description: 'Numbered pages, with the total.',
  },
  token: {
    params: [
      { name: 'page_size', schema: SIZE, description: `Page size (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
      { name: 'page_token', schema: { type: 'string' }, description: 'An opaque token from `next_page_token`.' },
    ],
    envelope: '`next_page_token` (absent on the last page)',
    description: 'Page tokens (AIP-158 style).',
  },
  keyset: {
    params: [
      { name: 'after_id', schema: { type: 'string', format: 'uuid' }, description: 'The id of the last object of the previous page (keyset on id; no other sort).' },
      { name: 'limit', schema: SIZE, description: `Page size (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).` },
    ],
    envelope: '`pagination: {has_more}`',
    description: 'Keyset on id.',
  },
};

/** Each pagination parameter once, for documenting a collection's query. */
export function paginationParameters(): ListParameter[] {
  const seen = new Map<string, ListParameter>();
  for (const style of Object.values(PAGINATION_STYLES)) for (const p of style.params) if (!seen.has(p.name)) seen.set(p.name, p);
  return [...seen.values()];
}

/** The filter operators beside plain equality (`field[op]=value`). */
export const FILTER_OPERATORS = ['ne', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
