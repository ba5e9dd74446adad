// Full-text search on PostgreSQL: a weighted tsvector written with each row and a tsquery built from words only.
import type { CompiledResource } from '../../model/compile.js';
import type { StoredRecord } from '../types.js';

const MAX_TERMS = 16;

/** Lowercased, diacritics removed, so "cafe" finds "Café" as it does on SQLite (unicode61 remove_diacritics). */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** `word1 | word2 | last:*` — words are letters and digits only, so no tsquery operator can come from a client. */
export function tsquery(text: string): string | undefined {
  const words = fold(text.normalize('NFKC'))
    .match(/[\p{L}\p{N}]+/gu)
    ?.slice(0, MAX_TERMS);
  if (!words || words.length === 0) return undefined;
  return words.map((w, i) => (i === words.length - 1 && w.length >= 2 ? `${w}:*` : w)).join(' | ');
}

/** The SQL expression and parameters of a row's search document: weight A for the first field, B for the others. */
export function searchDocument(r: CompiledResource, record: StoredRecord): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  r.searchable.forEach((field, i) => {
    params.push(fold(String(record[field] ?? '')));
    parts.push(`setweight(to_tsvector('simple', ?), '${i === 0 ? 'A' : 'B'}')`);
  });
  return { sql: parts.join(' || '), params };
}
