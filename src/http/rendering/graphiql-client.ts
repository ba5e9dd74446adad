// The GraphiQL page's own script and style sheet (served as /graphql/assets/graphiql-page.js and .css): browser code, kept as text so the build has nothing to copy.

/**
 * Renders GraphiQL into #graphiql with a fetcher that POSTs to this server's endpoint (data-endpoint) with the
 * browser's credentials (same origin). A script file, not an inline one, so the page's CSP allows scripts from
 * 'self' only.
 *
 * Credentials: an `X-API-Key` or `Authorization` typed into GraphiQL's Headers tab is sent as typed, and not
 * kept in localStorage where any script of this origin could read it later: shouldPersistHeaders stays false
 * (the tabs are stored without headers) and the storage GraphiQL is given drops the headers of the history and
 * favourites it stores (GraphiQL 3 keeps them there whatever that setting says). Without one, the request rides on the browser's
 * session cookie, whose POSTs need the session's CSRF token (DESIGN §8, synchronizer mode: it is only in the
 * session's body): read once from the current session (data-session-url, with the headers that select the
 * newest version under the configured strategy) and sent as X-CSRF-Token. No session (401 there) means no
 * token; when the request then meets CSRF_TOKEN_INVALID (a login since, in another tab, or a new session), the
 * token is read again and the request retried once.
 *
 * Answers are asked for as application/graphql-response+json first (GraphQL over HTTP §6.4): a refusal before
 * the operation (credentials, rate limit) then comes in GraphQL's shape, which GraphiQL shows with its code.
 * `data-canon-state` on #graphiql says how starting ended (`rendered`, `failed`), for people and tests alike.
 */
export const GRAPHIQL_SCRIPT = `'use strict';
(() => {
  const root = document.getElementById('graphiql');
  const endpoint = root.getAttribute('data-endpoint');
  const sessionUrl = root.getAttribute('data-session-url');
  const sessionHeaders = JSON.parse(root.getAttribute('data-session-headers') || '{}');
  const fail = (message) => {
    root.setAttribute('data-canon-state', 'failed');
    root.className = 'canon-graphiql-error';
    root.textContent = message;
  };
  if (!window.React || !window.ReactDOM || !window.GraphiQL) return fail('GraphiQL could not be loaded from this server.');

  const ownCredential = (headers) => Object.keys(headers).some((name) => /^(x-api-key|authorization)$/i.test(name));
  let token;
  const csrfToken = () => {
    if (!token)
      token = fetch(sessionUrl, { credentials: 'same-origin', headers: { ...sessionHeaders, Accept: 'application/json' } })
        .then((res) => (res.ok ? res.json() : undefined))
        .then((body) => (body && typeof body.csrf_token === 'string' ? body.csrf_token : undefined))
        .catch(() => undefined);
    return token;
  };
  const codeOf = (body) => {
    const error = body && (Array.isArray(body.errors) ? body.errors[0] : body.error);
    return error && (error.extensions ? error.extensions.code : error.code);
  };
  const send = async (params, headers) => {
    const sent = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json;q=0.9', ...headers };
    if (!ownCredential(headers)) {
      const csrf = await csrfToken();
      if (csrf) sent['X-CSRF-Token'] = csrf;
    }
    const res = await fetch(endpoint, { method: 'POST', credentials: 'same-origin', headers: sent, body: JSON.stringify(params) });
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return text || 'HTTP ' + res.status;
    }
  };
  const fetcher = async (params, options) => {
    const headers = (options && options.headers) || {};
    let body = await send(params, headers);
    if (codeOf(body) === 'CSRF_TOKEN_INVALID' && !ownCredential(headers)) {
      token = undefined;
      body = await send(params, headers);
    }
    return body;
  };

  // localStorage as GraphiQL's StorageAPI uses it (its own namespace), minus the headers of stored history entries.
  const NAMESPACE = 'graphiql:';
  const ownKeys = () => Object.keys(localStorage).filter((key) => key.startsWith(NAMESPACE));
  const withoutHeaders = (key, value) => {
    if (key !== NAMESPACE + 'queries' && key !== NAMESPACE + 'favorites') return value;
    try {
      const stored = JSON.parse(value);
      for (const list of Object.values(stored)) if (Array.isArray(list)) for (const item of list) if (item && typeof item === 'object') delete item.headers;
      return JSON.stringify(stored);
    } catch {
      return value;
    }
  };
  const storage = {
    getItem: (key) => localStorage.getItem(key),
    setItem: (key, value) => localStorage.setItem(key, withoutHeaders(key, value)),
    removeItem: (key) => localStorage.removeItem(key),
    clear: () => ownKeys().forEach((key) => localStorage.removeItem(key)),
    get length() {
      return ownKeys().length;
    },
  };

  const defaultQuery = [
    '# Requests run as this browser’s session, or as',
    '# an X-API-Key header typed into Headers below.',
    '# Ctrl-Enter runs; Ctrl-Space completes.',
    '',
    '{',
    '  products(first: 5) {',
    '    edges {',
    '      node {',
    '        id',
    '        name',
    '        price {',
    '          amount',
    '          currency',
    '        }',
    '      }',
    '    }',
    '  }',
    '}',
    '',
  ].join('\\n');
  try {
    ReactDOM.createRoot(root).render(React.createElement(GraphiQL, { fetcher, defaultQuery, storage, shouldPersistHeaders: false }));
    root.setAttribute('data-canon-state', 'rendered');
  } catch (err) {
    fail('GraphiQL could not start: ' + (err && err.message ? err.message : err));
  }
})();
`;

/** The bar above GraphiQL (links to the REST reference and the guide), and GraphiQL filling the rest of the window. */
export const GRAPHIQL_STYLE = `html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; }
.canon-graphiql-bar {
  display: flex; flex-wrap: wrap; align-items: center; gap: 0.25rem 1.5rem;
  padding: 0.5rem 1rem; background: #1f2933; color: #f5f7fa; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Arial, sans-serif;
}
.canon-graphiql-bar nav { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; align-items: center; }
.canon-graphiql-bar a { color: #f5f7fa; }
.canon-graphiql-bar .canon-graphiql-hint { color: #9aa5b1; }
#graphiql { flex: 1; min-height: 0; }
.canon-graphiql-error { padding: 2rem 1rem; color: #b00020; font: 16px/1.5 system-ui, sans-serif; }
`;
