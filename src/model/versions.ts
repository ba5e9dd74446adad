// API versions (DESIGN §10), owned by the app definition: each a release date and the declarative changes that lead to the next newer one; translation walks the chain.
import { bodyUp, pathDown, pathUp, viewDown, type VersionChange } from './version-changes.js';

/** A version as an app defines it: listed oldest first in `defineApp({ versions })`. */
export interface VersionDef {
  /** The path segment: `v1`, `v2`. */
  name: string;
  /** Release date (YYYY-MM-DD), for date-based selection. */
  date: string;
  description?: string;
  /** The changes that lead from this version to the next newer one (none for the newest). */
  changes?: VersionChange[];
  /** A version its clients should leave: every response says so (RFC 9745 `Deprecation`, RFC 8594 `Sunset`). */
  deprecation?: VersionDeprecation;
}

export interface VersionDeprecation {
  /** When it was deprecated (YYYY-MM-DD, UTC midnight). */
  date: string;
  /** When it may stop being served (YYYY-MM-DD, UTC midnight), not before `date`. */
  sunset: string;
  /** Where its migration guide is served: a path on this server (`/docs/migrations/v1-to-v2`) or a URL. */
  guide: string;
}

/** A compiled version: its changes to the next newer one, and that version. */
export interface ApiVersion {
  name: string;
  date: string;
  description?: string;
  changesToNext: VersionChange[];
  newer: ApiVersion | undefined;
  deprecation?: VersionDeprecation;
  /** What links and `Location` start with: `/v2` when versions are in the path, empty when a header or parameter names them. */
  prefix: string;
}

/** An app that names no versions serves one: `v2`, the reference API's current version (DESIGN §10). */
export const DEFAULT_VERSIONS: readonly VersionDef[] = [{ name: 'v2', date: '2026-03-01' }];

/** Newest first, each linked to its successor; names unique, dates increasing, no changes after the newest. */
export function compileVersions(defs: readonly VersionDef[] = DEFAULT_VERSIONS, inPath = true): ApiVersion[] {
  if (defs.length === 0) throw new Error('an app serves at least one version');
  const names = new Set<string>();
  let newer: ApiVersion | undefined;
  const out: ApiVersion[] = [];
  for (let i = defs.length - 1; i >= 0; i--) {
    const d = defs[i]!;
    if (!/^v[0-9]+$/.test(d.name)) throw new Error(`version ${d.name}: names are v1, v2, …`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d.date)) throw new Error(`version ${d.name}: date ${d.date} is not YYYY-MM-DD`);
    if (names.has(d.name)) throw new Error(`version ${d.name} is defined twice`);
    if (newer && d.date >= newer.date) throw new Error(`version ${d.name} must be older than ${newer.name} (versions are listed oldest first)`);
    if (!newer && d.changes?.length) throw new Error(`version ${d.name} is the newest: it has no changes to a next version`);
    if (d.deprecation) {
      const { date, sunset } = d.deprecation;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !/^\d{4}-\d{2}-\d{2}$/.test(sunset)) throw new Error(`version ${d.name}: deprecation and sunset dates are YYYY-MM-DD`);
      if (sunset < date) throw new Error(`version ${d.name}: the sunset (${sunset}) comes before the deprecation (${date})`);
    }
    names.add(d.name);
    const v: ApiVersion = {
      name: d.name,
      date: d.date,
      ...(d.description ? { description: d.description } : {}),
      changesToNext: [...(d.changes ?? [])],
      newer,
      ...(d.deprecation ? { deprecation: { ...d.deprecation } } : {}),
      prefix: inPath ? `/${d.name}` : '',
    };
    out.push(v);
    newer = v;
  }
  return out;
}

/** Chains by version and resource, oldest first and newest first: built once, read on every request and every row. */
const chains = new WeakMap<ApiVersion, Map<string, { up: VersionChange[]; down: VersionChange[] }>>();

/** The changes from `version` up to the newest for one resource: `up` oldest first, `down` newest first. */
function chain(version: ApiVersion, resource: string): { up: VersionChange[]; down: VersionChange[] } {
  let byResource = chains.get(version);
  if (!byResource) chains.set(version, (byResource = new Map()));
  let found = byResource.get(resource);
  if (!found) {
    const up: VersionChange[] = [];
    for (let v: ApiVersion | undefined = version; v?.newer; v = v.newer) up.push(...v.changesToNext.filter((c) => c.resource === resource));
    found = { up, down: [...up].reverse() };
    byResource.set(resource, found);
  }
  return found;
}

/** The changes from `version` up to the newest for one resource, newest first: the order views and schemas walk down. */
export function changesDown(version: ApiVersion, resource: string): readonly VersionChange[] {
  return chain(version, resource).down;
}

/** A request body written for `version`, in the newest shape. */
export function translateUp(version: ApiVersion, resource: string, body: Record<string, unknown>): Record<string, unknown> {
  let out = body;
  for (const change of chain(version, resource).up) out = bodyUp(change, out);
  return out;
}

/** A view or event payload in the newest shape, as `version` shows it: the newest changes are undone first. */
export function translateDown(version: ApiVersion, resource: string, view: Record<string, unknown>): Record<string, unknown> {
  if (!version.newer) return view;
  let out = view;
  for (const change of chain(version, resource).down) out = viewDown(change, out);
  return out;
}

/** A field path as `version` names it (filters, sort, sparse fields), as the newest names it; undefined when it has no newest name. */
export function translatePathUp(version: ApiVersion, resource: string, path: string): string | undefined {
  let out: string | undefined = path;
  for (const change of chain(version, resource).up) {
    if (out === undefined) return undefined;
    out = pathUp(change, out);
  }
  return out;
}

/** A field path of the newest version (an error detail's `field`) as `version` names it. */
export function translatePathDown(version: ApiVersion, resource: string, path: string): string {
  let out = path;
  for (const change of chain(version, resource).down) out = pathDown(change, out);
  return out;
}
