// Turns client text into a safe FTS5 MATCH expression: words only, each quoted, the last one as a prefix.

const MAX_TERMS = 16;

/** Returns undefined when the text has no searchable words (the search then matches nothing). */
export function matchExpression(text: string): string | undefined {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu)
    ?.slice(0, MAX_TERMS);
  if (!words || words.length === 0) return undefined;
  // Quoting makes every word a plain string to FTS5 (no operators, columns or NEAR from clients);
  // OR ranks documents with more of the words higher (bm25) without dropping partial matches.
  return words.map((w, i) => `"${w}"${i === words.length - 1 && w.length >= 2 ? '*' : ''}`).join(' OR ');
}

/** bm25 weights: the first searchable field (the name or title) counts twice as much as the others. */
export function bm25Weights(count: number): string {
  return Array.from({ length: count }, (_, i) => (i === 0 ? '2.0' : '1.0')).join(', ');
}
