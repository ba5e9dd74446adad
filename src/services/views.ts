// The public view of a record: the fields clients may see, in the latest version's shape, without links.
import type { CompiledResource } from '../model/compile.js';
import type { StoredRecord } from '../store/types.js';

export function publicView(resource: CompiledResource, record: StoredRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const name of resource.rendered) view[name] = record[name] ?? null;
  return view;
}

/** The fields whose values differ, with their previous values (for `previous_attributes`). */
export function changedFields(resource: CompiledResource, before: StoredRecord, after: StoredRecord): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const name of resource.rendered) {
    if (name === 'updated_at') continue;
    if (!sameValue(before[name], after[name])) changed[name] = before[name] ?? null;
  }
  return changed;
}

/** Whether any stored field (hidden ones included) differs. */
export function anyStoredChange(resource: CompiledResource, before: StoredRecord, after: StoredRecord): boolean {
  return resource.stored.some(([name]) => !sameValue(before[name], after[name]));
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a === 'object' && typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return false;
}
