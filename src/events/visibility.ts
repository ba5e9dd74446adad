// Which events a principal may see (DESIGN §9): admins every event; others the events of objects they own, of resources their scopes let them read.
import type { CompiledModel } from '../model/compile.js';
import type { Principal } from '../model/principal.js';
import { scopeAllows } from '../services/permissions.js';
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

/** A type pattern as a regular expression, `*` matching any run of characters. */
function patternRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
}

/** The same filter in memory, for the live stream (the store applies it in SQL for pages). */
export function eventMatcher(filter: EventFilter): (e: StoredEvent) => boolean {
  const types = filter.types?.map(patternRegExp);
  const resources = filter.resources ? new Set(filter.resources) : undefined;
  return (e) => (filter.ownerId === undefined || e.owner_id === filter.ownerId) && (!resources || resources.has(e.resource)) && (!types || types.some((t) => t.test(e.type)));
}

/** Type patterns as `type=` takes them: a comma list of event types, `*` anywhere (at most 20 patterns). */
export const TYPE_PATTERN = /^[a-z0-9_.*-]{1,100}$/;
export const MAX_TYPE_PATTERNS = 20;
