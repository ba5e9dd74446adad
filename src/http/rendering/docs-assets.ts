// The files the /docs page loads (issue 27.7), read once at start: Redoc's standalone bundle and its licences, the page's own script and style, and the changelog.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DocsAsset } from '../../catalog/docs-operations.js';
import { DOCS_SCRIPT, DOCS_STYLE } from './docs-client.js';

/** Where the build (scripts/build.mjs) copies the renderer: dist/assets, two levels above dist/src/http; what an installed package has. */
const BUILT_ASSETS = fileURLToPath(new URL('../../../assets/', import.meta.url));
/** The renderer in a checkout built by tsc alone: the redoc devDependency itself (three levels above dist/src/http). */
const REDOC_PACKAGE = fileURLToPath(new URL('../../../../node_modules/redoc/', import.meta.url));
const CHANGELOG = fileURLToPath(new URL('../../../../docs/CHANGELOG.md', import.meta.url));

/** Where each renderer file is in dist/assets and in the redoc package; scripts/build.mjs copies the latter to the former. */
export const RENDERER_FILES: ReadonlyArray<{ asset: DocsAsset; built: string; inPackage: string }> = [
  { asset: 'redoc.standalone.js', built: 'redoc.standalone.js', inPackage: 'bundles/redoc.standalone.js' },
  { asset: 'redoc.standalone.js.LICENSE.txt', built: 'redoc.standalone.js.LICENSE.txt', inPackage: 'bundles/redoc.standalone.js.LICENSE.txt' },
  { asset: 'redoc.LICENSE', built: 'redoc.LICENSE', inPackage: 'LICENSE' },
];

/**
 * The one address of another host the bundle loads by itself: the Redocly logo beside "API docs by Redocly" in
 * the sidebar, an <img> rendered whatever the options (Redoc 2.5 has none to turn it off). Pointed at an empty
 * inline image instead, so the page contacts no other host and the CSP needs no third-party origin; the credit
 * text and its link stay.
 */
export const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E';

export interface Asset {
  body: Buffer;
  contentType: string;
  /** A strong validator: the digest of the bytes (RFC 9110 §8.8.3). */
  etag: string;
  /** What the page appends to the asset's URL (`?v=`): with it, the URL names these bytes and may be cached for a year. */
  fingerprint: string;
}

export interface DocsFiles {
  assets: Map<DocsAsset, Asset>;
  /** Where the renderer was looked for, when it was not found: the reference page cannot work without it. */
  missingRenderer?: string;
  changelog?: Asset;
}

export function asset(body: Buffer | string, contentType: string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const digest = createHash('sha256').update(bytes).digest('base64url');
  return { body: bytes, contentType, etag: `"${digest}"`, fingerprint: digest.slice(0, 16) };
}

/** The media type of an asset by its name's ending: a script, a style sheet, else text (the licences). */
export function typeOf(name: string): string {
  return name.endsWith('.js') ? 'text/javascript; charset=utf-8' : name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/plain; charset=utf-8';
}

/** A file's bytes, or undefined when it does not exist. */
export function readOptional(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The files by where they were read from, once per process: the bundle is 1 MB, rewritten and digested, which was
 * an eighth of building an app (8 ms) in a process that builds many (the test suite builds thousands).
 */
const cache = new Map<string, DocsFiles>();

/**
 * Every file, read once: a request never touches the file system. The renderer comes from dist/assets, else
 * from the redoc package (a checkout built by tsc alone); all of its files from the same place.
 */
export function readDocsFiles(dirs: { built?: string; redocPackage?: string; changelog?: string } = {}): DocsFiles {
  const built = dirs.built ?? BUILT_ASSETS;
  const redocPackage = dirs.redocPackage ?? REDOC_PACKAGE;
  const changelogPath = dirs.changelog ?? CHANGELOG;
  const key = `${built}\0${redocPackage}\0${changelogPath}`;
  const known = cache.get(key);
  if (known) return known;
  const assets = new Map<DocsAsset, Asset>([
    ['docs.js', asset(DOCS_SCRIPT, typeOf('docs.js'))],
    ['docs.css', asset(DOCS_STYLE, typeOf('docs.css'))],
  ]);
  const files: DocsFiles = { assets };
  const read = (at: (f: (typeof RENDERER_FILES)[number]) => string): Buffer[] | undefined => {
    const found = RENDERER_FILES.map((f) => readOptional(at(f)));
    return found.every((b) => b !== undefined) ? (found as Buffer[]) : undefined;
  };
  const renderer = read((f) => `${built}${f.built}`) ?? read((f) => `${redocPackage}${f.inPackage}`);
  if (renderer) {
    RENDERER_FILES.forEach((f, i) => {
      const bytes = f.asset === 'redoc.standalone.js' ? Buffer.from(renderer[i]!.toString('utf8').replaceAll(REDOC_LOGO_URL, EMPTY_IMAGE), 'utf8') : renderer[i]!;
      assets.set(f.asset, asset(bytes, typeOf(f.asset)));
    });
  } else {
    files.missingRenderer = `${built}redoc.standalone.js (or ${redocPackage}bundles/redoc.standalone.js)`;
  }
  const changelog = readOptional(changelogPath);
  if (changelog) files.changelog = asset(changelog, 'text/markdown; charset=utf-8');
  cache.set(key, files);
  return files;
}
