// The /docs page's own script and style sheet (served as /docs/assets/docs.js and docs.css): browser code, kept as text so the build has nothing to copy.

/**
 * Fetches the version's OpenAPI document from this server (its URL and the headers that select the version under
 * the configured strategy are on #redoc) and renders it with Redoc. A script file, not an inline one, so the
 * page's CSP allows scripts from 'self' only. System fonts: Redoc's default faces (Roboto, Montserrat) would need
 * a font host. `data-canon-state` says how rendering ended (`rendered`, `failed`), for people and tests alike.
 */
export const DOCS_SCRIPT = `'use strict';
(() => {
  const root = document.getElementById('redoc');
  const fail = (message) => {
    root.setAttribute('data-canon-state', 'failed');
    root.className = 'canon-docs-error';
    root.textContent = message;
  };
  const sans = 'system-ui, -apple-system, "Segoe UI", "Helvetica Neue", Arial, sans-serif';
  const options = {
    theme: { typography: { fontFamily: sans, headings: { fontFamily: sans }, code: { fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace' } } },
    scrollYOffset: '.canon-docs-bar',
    expandResponses: '200,201',
    requiredPropsFirst: true,
    jsonSampleExpandLevel: 2,
  };
  const headers = JSON.parse(root.getAttribute('data-spec-headers') || '{}');
  fetch(root.getAttribute('data-spec-url'), { headers, credentials: 'omit' })
    .then((res) => {
      if (!res.ok) throw new Error('the OpenAPI document answered ' + res.status);
      return res.json();
    })
    .then((spec) =>
      window.Redoc.init(spec, options, root, (err) => {
        if (err) fail('The reference could not be rendered: ' + (err.message || err));
        else root.setAttribute('data-canon-state', 'rendered');
      }),
    )
    .catch((err) => fail('The reference could not be loaded: ' + err.message));
})();
`;

/** The bar above the reference: versions, guides, changelog; it stays on top while the reference scrolls (Redoc's scrollYOffset). */
export const DOCS_STYLE = `body { margin: 0; }
.canon-docs-bar {
  position: sticky; top: 0; z-index: 20; display: flex; flex-wrap: wrap; align-items: center; gap: 0.25rem 1.5rem;
  padding: 0.5rem 1rem; background: #1f2933; color: #f5f7fa; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Arial, sans-serif;
}
.canon-docs-bar nav { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; align-items: center; }
.canon-docs-bar a { color: #f5f7fa; }
.canon-docs-bar a[aria-current="page"] { font-weight: 700; text-decoration: none; }
.canon-docs-bar .canon-docs-label { color: #9aa5b1; }
.canon-docs-error { padding: 2rem 1rem; color: #b00020; font: 16px/1.5 system-ui, sans-serif; }
`;
