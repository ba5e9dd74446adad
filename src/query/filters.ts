// Parses `field=value` and `field[op]=value` filters against the model's filterable paths.
import type { ErrorDetail } from '../errors/app-error.js';
import type { CompiledResource } from '../model/compile.js';
import type { Condition, ConditionOp } from '../model/records.js';
import { FILTER_OPERATORS, MAX_IN } from './list-parameters.js';
import { parseValue } from './values.js';

const OPS: ReadonlySet<string> = new Set(['eq', ...FILTER_OPERATORS]);
const KEY = /^([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)(?:\[([a-z]+)\])?$/;

/** One filter parameter → a typed condition, or a detail explaining what is wrong with it. */
export function parseFilter(details: ErrorDetail[], r: CompiledResource, key: string, raw: string): Condition | undefined {
  const m = KEY.exec(key);
  const path = m ? r.paths.get(m[1]!) : undefined;
  if (!m || !path || !path.filterable) {
    details.push({ field: key, message: `is not a filterable field of ${r.name}`, value: raw });
    return undefined;
  }
  const op = (m[2] ?? 'eq') as ConditionOp;
  if (!OPS.has(op)) {
    details.push({ field: key, message: `unknown operator ${m[2]}; use one of ${[...OPS].join(', ')}`, value: raw });
    return undefined;
  }
  const parts = op === 'in' ? raw.split(',') : [raw];
  if (parts.length > MAX_IN) {
    details.push({ field: key, message: `takes at most ${MAX_IN} values`, value: raw });
    return undefined;
  }
  const values: unknown[] = [];
  for (const part of parts) {
    const v = parseValue(path, part);
    if (!v.ok) {
      details.push({ field: key, message: v.message, value: part });
      return undefined;
    }
    values.push(v.value);
  }
  return { path: path.path, op, value: op === 'in' ? values : values[0] };
}
