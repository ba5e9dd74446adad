// Text both stores hold alike: no U+0000 (PostgreSQL's text cannot) and no unpaired UTF-16 surrogate (not Unicode at all; SQLite kept them).

/** A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this pattern looks for.
const ILL_FORMED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const ILL_FORMED_MESSAGE = 'must not contain U+0000 or an unpaired surrogate';

export function isWellFormedText(s: string): boolean {
  return !ILL_FORMED.test(s);
}

/**
 * The dotted paths (`tags.1`, `name`) of every string in `value` that is not well-formed text, keys
 * included (a key is reported at its own path). Iterative: a deep body cannot exhaust the stack.
 */
export function illFormedPaths(value: unknown): string[] {
  const out: string[] = [];
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isWellFormedText(v)) out.push(path || '(body)');
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, path ? `${path}.${i}` : String(i)]));
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        const at = path ? `${path}.${key}` : key;
        if (!isWellFormedText(key)) out.push(at);
        else stack.push([item, at]);
      }
    }
  }
  return out.sort();
}
