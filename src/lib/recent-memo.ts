// Answers of a pure function of one header value, kept for the values recently seen: clients send a handful of spellings again and again.

/** Values kept per memo, in all; when full, it starts over (bounded whatever values clients send). */
const KEPT = 256;
/** A longer value is answered but not kept by default: a few odd headers must not hold megabytes. */
const LONGEST_KEPT = 512;

/**
 * `compute` made to remember its recent answers (a throw is not an answer: it is thrown again next time). Negotiating an Accept or Accept-Encoding header costs more than
 * the rest of a cached read (a Negotiator parses, sorts and matches on every call), and its answer depends on the
 * header's text alone.
 */
export function recentMemo<T>(compute: (value: string) => T, longestKept = LONGEST_KEPT): (value: string) => T {
  const recent = new Map<string, T>();
  return (value) => {
    const kept = recent.get(value);
    if (kept !== undefined || recent.has(value)) return kept as T;
    const answer = compute(value);
    if (value.length > longestKept) return answer;
    if (recent.size >= KEPT) recent.clear();
    recent.set(value, answer);
    return answer;
  };
}
