// SQLite's codec: booleans as 0/1, JSON as text, timestamps as ISO 8601 text (which sorts correctly).
import type { Codec } from '../sql/rows.js';

const JSON_TYPES = new Set(['string[]', 'object']);

export const sqliteCodec: Codec = {
  encode: (type, value) => (type === 'boolean' ? (value ? 1 : 0) : JSON_TYPES.has(type) ? JSON.stringify(value) : value),
  decode: (type, value) => (type === 'boolean' ? value === 1 : JSON_TYPES.has(type) ? JSON.parse(value as string) : value),
};
