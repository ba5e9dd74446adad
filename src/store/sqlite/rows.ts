// SQLite's codec: booleans as 0/1, JSON as text, timestamps as ISO 8601 text (which sorts correctly).
import type { Codec } from '../sql/rows.js';

export const sqliteCodec: Codec = {
  encode: (type, value) => (type === 'boolean' ? (value ? 1 : 0) : type === 'string[]' ? JSON.stringify(value) : value),
  decode: (type, value) => (type === 'boolean' ? value === 1 : type === 'string[]' ? JSON.parse(value as string) : value),
};
