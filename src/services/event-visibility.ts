// Which events a principal may see (DESIGN §9): admins every event; others the events of objects they own, of resources their scopes let them read.
import type { CompiledModel } from '../model/compile.js';
import type { Principal } from '../model/principal.js';
import { scopeAllows } from './permissions.js';
import type { EventFilter, StoredEvent } from '../store/types.js';

/**
 * The store filter for `principal` asking for `types` (patterns). A customer sees its own orders, items,
 * reviews and user, and never another's; an admin (an admin key, the admin role) sees everything. Scoped
 * credentials see only resources their scopes may read, so a `products:read` key learns nothing of orders.
 * Resources hidden from the API (sessions, signing keys) never write events; resources that exist only for
 * the platform are not listed unless the caller is an admin.
 */
export function eventFilterFor(model: CompiledModel, principal: Principal, types: readonly string[] | undefined): EventFilter {
  const filter: EventFilter = {};
  if (types?.length) filter.types = types;
  if (principal.role !== 'admin') filter.ownerId = principal.userId ?? '00000000-0000-0000-0000-000000000000';
  if (principal.scopes.length) filter.resources = [...model.resources.keys()].filter((name) => scopeAllows(principal.scopes, name, 'read'));
  return filter;
}

/**
 * Whether `text` matches `pattern`, `*` matching any run of characters. Two pointers with one backtrack
 * point, O(length × pattern) at worst: a regular expression of many `.*` backtracks exponentially, and
 * patterns come from any authenticated caller.
 */
export function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * Whether a filter lets nothing through whatever is written: scopes that read no resource. A stream whose
 * principal is left with this has lost all access and is closed (DESIGN §9).
 */
export function seesNothing(filter: EventFilter): boolean {
  return filter.resources !== undefined && filter.resources.length === 0;
}

/** The same filter in memory, for the live stream (the store applies it in SQL for pages). */
export function eventMatcher(filter: EventFilter): (e: StoredEvent) => boolean {
  const types = filter.types;
  const resources = filter.resources ? new Set(filter.resources) : undefined;
  return (e) =>
    (filter.ownerId === undefined || e.owner_id === filter.ownerId) && (!resources || resources.has(e.resource)) && (!types || types.some((t) => globMatches(t, e.type)));
}

/**
 * Type patterns as `type=` takes them: a comma list of event types, `*` anywhere but at most 4 times in a
 * pattern (at most 20 patterns): SQL LIKE backtracks over every `%`, so their number is bounded.
 */
export const TYPE_PATTERN = /^(?=[a-z0-9_.*-]{1,100}$)[a-z0-9_.-]*(?:\*[a-z0-9_.-]*){0,4}$/;
export const MAX_TYPE_PATTERNS = 20;

/** Whether `types` are patterns a feed takes: at most MAX_TYPE_PATTERNS, each a TYPE_PATTERN. */
export function validTypePatterns(types: readonly string[]): boolean {
  return types.length <= MAX_TYPE_PATTERNS && types.every((t) => TYPE_PATTERN.test(t));
}
