// The GraphiQL page (issue 29.7): HTML that loads React, GraphiQL and the page script from this server, under a CSP that names no other host.
import type { ApiVersion } from '../../model/versions.js';
import type { GraphiqlAsset } from '../../catalog/graphiql-operations.js';
import type { VersioningStrategy } from '../versioning/version-selection.js';
import { DOCS_PAGE_PATH } from '../../catalog/docs-operations.js';
import { GRAPHQL_PATH } from '../../catalog/graphql-operations.js';
import { documentRequest } from './docs-page.js';

/**
 * The page's Content-Security-Policy, as narrow as GraphiQL 3 runs under: scripts only from this origin (the
 * UMD builds and graphiql-page.js; no inline script, no eval); styles from this origin and inline (React and
 * CodeMirror set style attributes, and GraphiQL's popovers position themselves by them, which no nonce
 * covers); images and fonts from this origin and data: (GraphiQL's style sheet inlines its fonts and icons);
 * fetch only to this origin (/graphql and the session's CSRF token); no workers, frames, plugins, forms,
 * <base>, and no framing of the page by others.
 */
export const GRAPHIQL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * How the page reads the current session (its CSRF token) under each strategy: the newest version's
 * `sessions/current`, at the URL and with the headers that select that version (the OpenAPI document's, docs-page.ts).
 */
export function sessionRequest(strategy: VersioningStrategy, newest: ApiVersion): { url: string; headers: Record<string, string> } {
  const doc = documentRequest(strategy, newest);
  return { url: doc.url.replace('openapi.json', 'sessions/current'), headers: doc.headers };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export interface GraphiqlPageInput {
  title: string;
  strategy: VersioningStrategy;
  newest: ApiVersion;
  /** The URL of an asset, with its fingerprint. */
  assetUrl: (name: GraphiqlAsset) => string;
}

/** Scripts in the order they depend on each other: React, ReactDOM (window.React), GraphiQL (both), the page's. */
const SCRIPTS: GraphiqlAsset[] = ['react.production.min.js', 'react-dom.production.min.js', 'graphiql.min.js', 'graphiql-page.js'];

export function renderGraphiqlPage(input: GraphiqlPageInput): string {
  const session = sessionRequest(input.strategy, input.newest);
  const scripts = SCRIPTS.map((name) => `<script src="${escapeHtml(input.assetUrl(name))}"></script>`).join('\n');
  // An empty inline icon: the browser would otherwise ask for /favicon.ico, a 404 and a console error.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${escapeHtml(input.title)} GraphiQL</title>
<link rel="stylesheet" href="${escapeHtml(input.assetUrl('graphiql.min.css'))}">
<link rel="stylesheet" href="${escapeHtml(input.assetUrl('graphiql-page.css'))}">
</head>
<body>
<header class="canon-graphiql-bar">
<strong>${escapeHtml(input.title)} GraphQL</strong>
<nav aria-label="Documentation"><a href="${DOCS_PAGE_PATH}">REST reference</a></nav>
<span class="canon-graphiql-hint">Requests run as this browser’s session, or as an X-API-Key or Authorization header typed into the Headers tab.</span>
</header>
<main id="graphiql" data-endpoint="${GRAPHQL_PATH}" data-session-url="${escapeHtml(session.url)}" data-session-headers="${escapeHtml(JSON.stringify(session.headers))}">
<noscript><p class="canon-graphiql-error">GraphiQL runs in JavaScript. Without it, send queries to ${GRAPHQL_PATH} with any HTTP client.</p></noscript>
</main>
${scripts}
</body>
</html>
`;
}
