// Serves the migration guides shipped in docs/migrations (DESIGN §10): the target of a deprecated version's Link header.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../errors/app-error.js';
import { ipLimitHook } from '../transport/auth-hooks.js';
import type { HttpDeps } from '../deps.js';
import type { RouteSpec } from './operation-routes.js';

/** docs/migrations of the package: three levels above dist/src/http (and src/http when run from source). */
const GUIDES_DIR = fileURLToPath(new URL('../../../../docs/migrations/', import.meta.url));
const GUIDE_NAME = /^(v[0-9]+-to-v[0-9]+)\.md$/;

/** Every guide, read once at start: a request never touches the file system, so no path it sends can reach one. */
export function readGuides(dir = GUIDES_DIR): Map<string, string> {
  const guides = new Map<string, string>();
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    return guides;
  }
  for (const file of files) {
    const name = GUIDE_NAME.exec(file)?.[1];
    if (name) guides.set(name, readFileSync(`${dir}${file}`, 'utf8'));
  }
  return guides;
}

/** The handler of `docs.migration` (src/catalog/platform-operations.ts). */
export function guideHandlers(deps: HttpDeps, guides: Map<string, string> = readGuides()): Record<string, RouteSpec> {
  const guide: RouteSpec = {
    // Public: anonymous traffic counts per client address, as on every public endpoint.
    onRequest: ipLimitHook(deps),
    handler: async (request, reply) => {
      const name = (request.params as { guide?: string }).guide ?? '';
      const text = guides.get(name);
      if (text === undefined) throw new AppError('ROUTE_NOT_FOUND', `There is no migration guide ${name}.`);
      // Documentation changes with releases, not per request: a day's caching, revalidated after.
      reply.header('cache-control', 'public, max-age=86400').type('text/markdown; charset=utf-8');
      return text;
    },
  };
  return { 'docs.migration': guide };
}
