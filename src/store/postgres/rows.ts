// PostgreSQL's codec (jsonb arrives parsed, timestamptz as Date), and the select list without the search column.
import type { CompiledResource } from '../../model/compile.js';
import type { Codec } from '../sql/rows.js';

export const pgCodec: Codec = {
  encode: (type, value) => (type === 'string[]' || type === 'object' ? JSON.stringify(value) : value),
  decode: (_type, value) => (value instanceof Date ? value.toISOString() : value),
};

/** The select list of a table without the internal search column. */
export function columnList(r: CompiledResource): string {
  return ['id', 'version', 'created_at', 'updated_at', ...r.columns.map((c) => c.name)].map((c) => `"${c}"`).join(', ');
}
