// Records as every layer sees them, and the conditions and sort keys that select them: the model's vocabulary, spoken by the query layer and the store.

/** A stored object: system fields plus the model's fields, as domain values (money as {amount, currency}). */
export interface StoredRecord {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

export type ConditionOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in';

/** A condition on a query path (`status`, `price.amount`); values are already typed by the query layer. */
export type Condition =
  | { path: string; op: ConditionOp; value: unknown }
  /** The object belongs to `value` through a parent: `order_id IN (SELECT id FROM orders WHERE user_id = value)`. */
  | { path: string; op: 'owned_via'; parent: string; parentField: string; value: string };

export interface SortKey {
  path: string;
  desc: boolean;
}
