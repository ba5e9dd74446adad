// API versions (DESIGN §10) and the change modules that translate between them; the renderer is their one entry point.
import type { CompiledResource } from './compile.js';

/** One breaking change: translates a request body up to the next version and a response down from it. */
export interface VersionChange {
  description: string;
  resources: string[];
  up(resource: CompiledResource, body: Record<string, unknown>): Record<string, unknown>;
  down(resource: CompiledResource, view: Record<string, unknown>): Record<string, unknown>;
}

export interface ApiVersion {
  /** The path segment and version number: `v2`. */
  name: string;
  /** Release date, for date-based version selection. */
  date: string;
  /** The changes that lead from this version to the next newer one (empty for the newest). */
  changesToNext: VersionChange[];
}

/** Newest first. Version 1 and its change modules arrive with the versioning issue. */
export const VERSIONS: ApiVersion[] = [{ name: 'v2', date: '2026-03-01', changesToNext: [] }];

export const CURRENT_VERSION: ApiVersion = VERSIONS[0]!;

export function versionByName(name: string): ApiVersion | undefined {
  return VERSIONS.find((v) => v.name === name);
}

/** Translates a latest-shape view down to `version` by applying each newer version's changes in reverse order. */
export function translateDown(version: ApiVersion, resource: CompiledResource, view: Record<string, unknown>): Record<string, unknown> {
  let out = view;
  for (const v of VERSIONS) {
    if (v === version) break;
    // v is newer than the target: undo the changes that led to v, newest first.
    const older = VERSIONS[VERSIONS.indexOf(v) + 1];
    for (const change of older?.changesToNext ?? []) if (change.resources.includes(resource.name)) out = change.down(resource, out);
  }
  return out;
}

/** Translates a request body written for `version` up to the latest shape. */
export function translateUp(version: ApiVersion, resource: CompiledResource, body: Record<string, unknown>): Record<string, unknown> {
  let out = body;
  for (let i = VERSIONS.indexOf(version); i > 0; i--) {
    for (const change of VERSIONS[i]!.changesToNext) if (change.resources.includes(resource.name)) out = change.up(resource, out);
  }
  return out;
}
