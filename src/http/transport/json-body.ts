// Request body parsers: JSON with forbidden keys and bounded depth, merge patch for PATCH only, and HTML forms.
import sjson from 'secure-json-parse';
import { AppError } from '../../errors/app-error.js';
import { decodeFormComponent } from '../../lib/form-encoding.js';

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Walks the parsed value iteratively (no recursion to exhaust) and rejects anything nested deeper than `max`. */
export function checkDepth(value: unknown, max: number): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) throw new AppError('INVALID_JSON', `The JSON body nests deeper than ${max} levels.`);
    for (const child of Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
}

export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') throw new AppError('INVALID_JSON', 'The body is empty; send a JSON value.');
  let value: unknown;
  try {
    // secure-json-parse rejects `__proto__` and `constructor.prototype` (prototype poisoning); a plain
    // `constructor` key is rejected below as well, as DESIGN §11 asks.
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const message = (err as Error).message.includes('prototype') ? 'The JSON body contains a forbidden key (__proto__ or constructor).' : 'The body is not valid JSON.';
    throw new AppError('INVALID_JSON', message);
  }
  checkDepth(value, maxDepth);
  rejectForbiddenKeys(value);
  return value;
}

function rejectForbiddenKeys(value: unknown): void {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (!Array.isArray(v)) {
      for (const key of Object.keys(v)) {
        if (FORBIDDEN.has(key)) throw new AppError('INVALID_JSON', `The JSON body contains a forbidden key (${key}).`);
      }
    }
    for (const child of Object.values(v)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
}

/** One form name or value, or 400 when its percent-encoding is not UTF-8. */
function formDecode(text: string): string {
  const decoded = decodeFormComponent(text);
  if (decoded === undefined) throw new AppError('BAD_REQUEST', 'The form is not valid percent-encoded UTF-8.');
  return decoded;
}

/** `application/x-www-form-urlencoded` (WHATWG URL §5.1) into a flat object of strings; a repeated or forbidden key, or bad percent-encoding, is 400. */
export function parseFormBody(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = formDecode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : formDecode(pair.slice(eq + 1));
    if (FORBIDDEN.has(key)) throw new AppError('BAD_REQUEST', `The form contains a forbidden key (${key}).`);
    if (key in out) throw new AppError('BAD_REQUEST', `The form field ${key} appears more than once.`);
    out[key] = value;
  }
  return { ...out };
}
