// The /docs page (issue 27.7): HTML that loads Redoc and the page script from this server, the version switcher, the guide links and GraphiQL's, under a CSP that names no other host.
import type { ApiVersion } from '../../model/versions.js';
import type { VersioningStrategy } from '../versioning/version-selection.js';
import { DOCS_CHANGELOG_PATH, DOCS_PAGE_PATH } from '../../catalog/docs-operations.js';
import { GRAPHQL_PATH } from '../../catalog/graphql-operations.js';

/**
 * The page's Content-Security-Policy, as narrow as Redoc runs under: scripts only from this origin (Redoc's
 * bundle and docs.js, no inline script, no eval); styles from this origin and inline (Redoc's styled-components
 * writes <style> elements and style attributes, which no nonce covers); images from this origin and data: (the
 * icons Redoc inlines); fetch only to this origin (the OpenAPI document); its search index in a worker built
 * from a blob:; no frames, no plugins, no forms, no <base>, and no framing of the page by others.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** How the page asks for a version's OpenAPI document under each strategy (DESIGN §10): a URL, and the headers that select the version. */
export function documentRequest(strategy: VersioningStrategy, version: ApiVersion): { url: string; headers: Record<string, string> } {
  const number = version.name.slice(1);
  switch (strategy) {
    case 'path':
      return { url: `/${version.name}/openapi.json`, headers: {} };
    case 'query':
      return { url: `/openapi.json?version=${number}`, headers: {} };
    case 'header':
      return { url: '/openapi.json', headers: { 'X-API-Version': number } };
    case 'media-type':
      return { url: '/openapi.json', headers: { Accept: `application/vnd.canon.${version.name}+json` } };
    case 'date':
      return { url: '/openapi.json', headers: { 'Canon-Version': version.date } };
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export interface DocsPageInput {
  title: string;
  /** Every served version, newest first. */
  versions: readonly ApiVersion[];
  current: ApiVersion;
  strategy: VersioningStrategy;
  /** The migration guides served (`v1-to-v2`), linked from the bar. */
  guides: readonly string[];
  /** Whether /docs/changelog has a changelog to serve. */
  changelog: boolean;
  /** The URL of an asset, with its fingerprint. */
  assetUrl: (name: 'redoc.standalone.js' | 'docs.js' | 'docs.css') => string;
}

export function renderDocsPage(input: DocsPageInput): string {
  const { current, versions } = input;
  const newest = versions[0]!;
  const doc = documentRequest(input.strategy, current);
  const versionLinks = versions
    .map((v) => {
      const label = `${v.name}${v === newest ? ' (current)' : v.deprecation ? ' (deprecated)' : ''}`;
      const href = v === newest ? DOCS_PAGE_PATH : `${DOCS_PAGE_PATH}?version=${v.name}`;
      return `<a href="${escapeHtml(href)}"${v === current ? ' aria-current="page"' : ''}>${escapeHtml(label)}</a>`;
    })
    .join(' ');
  const guideLinks = input.guides.map((g) => {
    const [from, to] = g.split('-to-');
    return `<a href="/docs/migrations/${escapeHtml(g)}">Migrating from ${escapeHtml(from ?? g)} to ${escapeHtml(to ?? '')}</a>`;
  });
  if (input.changelog) guideLinks.push(`<a href="${DOCS_CHANGELOG_PATH}">Changelog</a>`);
  // A plain link to the document only where its URL alone selects the version (path and query strategies).
  if (Object.keys(doc.headers).length === 0) guideLinks.push(`<a href="${escapeHtml(doc.url)}">OpenAPI document</a>`);
  // The same resources over GraphQL, in the browser (GraphiQL at GET /graphql, issue 29.7).
  guideLinks.push(`<a href="${GRAPHQL_PATH}">GraphQL (GraphiQL)</a>`);
  const title = `${input.title} ${current.name} reference`;
  // An empty inline icon: the browser would otherwise ask for /favicon.ico, a 404 and a console error.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(input.assetUrl('docs.css'))}">
</head>
<body>
<header class="canon-docs-bar">
<strong>${escapeHtml(input.title)}</strong>
<nav aria-label="API version"><span class="canon-docs-label">Version</span> ${versionLinks}</nav>
<nav aria-label="Guides">${guideLinks.join(' ')}</nav>
</header>
<main id="redoc" data-spec-url="${escapeHtml(doc.url)}" data-spec-headers="${escapeHtml(JSON.stringify(doc.headers))}">
<noscript><p class="canon-docs-error">This reference is rendered by JavaScript from the OpenAPI document of ${escapeHtml(current.name)}.</p></noscript>
</main>
<script src="${escapeHtml(input.assetUrl('redoc.standalone.js'))}"></script>
<script src="${escapeHtml(input.assetUrl('docs.js'))}"></script>
</body>
</html>
`;
}
