// Parses one query-string value into the typed value of a query path; errors name what was expected.
import { UUID_PATTERN as UUID } from '../lib/uuid.js';
import type { QueryPath } from '../model/compile.js';
import { parseTimestamp } from '../model/timestamps.js';

const INTEGER = /^-?\d{1,16}$/;
// The shape ajv-formats accepts for `email` in bodies, so a filter takes what a body would.
const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

export type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

export function parseValue(path: QueryPath, raw: string): Parsed {
  switch (path.type) {
    case 'integer': {
      if (!INTEGER.test(raw) || !Number.isSafeInteger(Number(raw))) return { ok: false, message: 'must be an integer' };
      return { ok: true, value: Number(raw) };
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') return { ok: false, message: 'must be true or false' };
      return { ok: true, value: raw === 'true' };
    case 'uuid':
      if (!UUID.test(raw)) return { ok: false, message: 'must be a UUID' };
      return { ok: true, value: raw.toLowerCase() };
    case 'timestamp': {
      // RFC 3339, or a bare date read as midnight UTC; real dates only, within the range both stores hold.
      const parsed = parseTimestamp(raw, true);
      return parsed.ok ? { ok: true, value: parsed.iso } : parsed;
    }
    case 'enum':
      if (!path.values?.includes(raw)) return { ok: false, message: `must be one of ${path.values?.join(', ')}` };
      return { ok: true, value: raw };
    case 'string':
      if (raw.length > 1000) return { ok: false, message: 'is too long' };
      if (path.pattern && !path.pattern.test(raw)) return { ok: false, message: `must match ${path.pattern.source}` };
      if (path.email) {
        if (!EMAIL.test(raw)) return { ok: false, message: 'must be an email address' };
        return { ok: true, value: raw.toLowerCase() };
      }
      return { ok: true, value: raw };
  }
}
