// A field path's value on a record as sorts and keysets compare it: `price.amount` reads inside the money object; absent is null.
export function valueAt(record: Record<string, unknown>, path: string): unknown {
  const dot = path.indexOf('.');
  if (dot < 0) return record[path] ?? null;
  const outer = record[path.slice(0, dot)] as Record<string, unknown> | null | undefined;
  return outer ? (outer[path.slice(dot + 1)] ?? null) : null;
}
