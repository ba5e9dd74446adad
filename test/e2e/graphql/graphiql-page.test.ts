// Issue 29.7: GET /graphql from a browser is the GraphiQL page, through HTTP on both stores: media type, CSP, caching and validators, its files under /graphql/assets, HEAD, the endpoint's answers unchanged for every other request, the catalog and the OpenAPI links, and the session URL under every versioning strategy.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, createCustomer, errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** Written out, not imported: widening the policy must fail here. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** A digest, and in the listening modes the coding fetch asked for (`+br`, `+gz`: a tag per content coding, issue 31.5). */
const STRONG_ETAG = /^"[A-Za-z0-9_-]{43}(?:\+(?:br|gz))?"$/;
/** What Chromium sends when it navigates to a page. */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
const PUBLIC = { key: null } as const;
const PAGE = { ...PUBLIC, headers: { accept: BROWSER } };
const TYPENAME = `/graphql?query=${encodeURIComponent('{ __typename }')}`;

/** Every `href` and `src` of a page, in order. */
function urlsOf(html: string): string[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
}

function attribute(html: string, name: string): string {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(html);
  assert.ok(m, `the page has ${name}`);
  return m[1]!.replaceAll('&quot;', '"').replaceAll('&amp;', '&');
}

for (const mode of MODES) {
  describe(`GraphiQL at GET /graphql (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server?.close());

    it('a browser’s GET is the page: public HTML, a strong ETag, a short public cache, Vary: Accept and its own CSP', async () => {
      const res = await server.request('GET', '/graphql', PAGE);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(res.headers.etag!, STRONG_ETAG);
      assert.equal(res.headers['cache-control'], 'public, max-age=300');
      // Accept chose the page over JSON; Accept-Encoding its coding (issue 31.5).
      assert.equal(res.headers.vary, 'Accept, Accept-Encoding');
      assert.equal(res.headers['content-security-policy'], CSP);
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(res.text, /^<!doctype html>/);
      // Scripts only by URL from this server, in dependency order, none inline (the CSP allows none).
      const scripts = [...res.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)].map((m) => [m[1]!, m[2]!] as const);
      assert.deepEqual(
        scripts.map(([attrs]) => attrs.replace(/\?v=[A-Za-z0-9_-]{16}"$/, '"')),
        ['react.production.min.js', 'react-dom.production.min.js', 'graphiql.min.js', 'graphiql-page.js'].map((f) => ` src="/graphql/assets/${f}"`),
      );
      assert.ok(scripts.every(([, body]) => body === ''));
      // Nothing on the page names another host.
      for (const url of urlsOf(res.text)) assert.match(url, /^(\/|data:)/, url);
      assert.doesNotMatch(res.text, /https?:\/\//);
      assert.equal(attribute(res.text, 'data-endpoint'), '/graphql');
      assert.equal(attribute(res.text, 'data-session-url'), '/v2/sessions/current');
      assert.equal(attribute(res.text, 'data-session-headers'), '{}');
      assert.match(res.text, /<a href="\/docs">REST reference<\/a>/);
      // Credentials are not asked for, and ones that would be refused do not matter: the page is public.
      const withBadKey = await server.request('GET', '/graphql', { key: 'ck_not_a_key', headers: { accept: 'text/html' } });
      assert.equal(withBadKey.status, 200);
      assert.equal(withBadKey.text, res.text);
    });

    it('HEAD answers as GET without a body; If-None-Match with the page’s ETag is 304', async () => {
      const page = await server.request('GET', '/graphql', PAGE);
      const head = await server.request('HEAD', '/graphql', PAGE);
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      for (const h of ['content-type', 'etag', 'cache-control', 'vary', 'content-security-policy']) assert.equal(head.headers[h], page.headers[h], h);
      const hit = await server.request('GET', '/graphql', { ...PUBLIC, headers: { accept: 'text/html', 'if-none-match': page.headers.etag! } });
      assert.equal(hit.status, 304);
      assert.equal(hit.text, '');
      assert.equal(hit.headers.etag, page.headers.etag);
      assert.equal(hit.headers['cache-control'], 'public, max-age=300');
      const other = await server.request('GET', '/graphql', { ...PUBLIC, headers: { accept: 'text/html', 'if-none-match': '"other"' } });
      assert.equal(other.status, 200);
    });

    it('every URL the page names answers 200 without credentials; assets: a year’s immutable cache under the fingerprint, strong ETags, 304', async () => {
      const page = await server.request('GET', '/graphql', PAGE);
      const types: Record<string, string> = {};
      for (const url of urlsOf(page.text).filter((u) => u.startsWith('/'))) {
        const res = await server.request('GET', url, { ...PUBLIC, headers: { accept: url === '/docs' ? 'text/html' : '*/*' } });
        assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 200)}`);
        types[url.split('?')[0]!] = res.headers['content-type']!;
        if (!url.includes('?v=')) continue;
        assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', url);
        assert.match(res.headers.etag!, STRONG_ETAG);
        // The fingerprint is the start of the ETag's digest: it names exactly these bytes.
        assert.equal(url.split('?v=')[1], res.headers.etag!.slice(1, 17));
        const revalidated = await server.request('GET', url, { ...PUBLIC, headers: { 'if-none-match': res.headers.etag! } });
        assert.equal(revalidated.status, 304, url);
        assert.equal(revalidated.text, '');
      }
      assert.deepEqual(types, {
        '/graphql/assets/graphiql.min.css': 'text/css; charset=utf-8',
        '/graphql/assets/graphiql-page.css': 'text/css; charset=utf-8',
        '/docs': 'text/html; charset=utf-8',
        '/graphql/assets/react.production.min.js': 'text/javascript; charset=utf-8',
        '/graphql/assets/react-dom.production.min.js': 'text/javascript; charset=utf-8',
        '/graphql/assets/graphiql.min.js': 'text/javascript; charset=utf-8',
        '/graphql/assets/graphiql-page.js': 'text/javascript; charset=utf-8',
      });
    });

    it('the assets are the packages’ files (source-map comments taken out), with their licences; by name alone a short cache; others 404, parameters 400', async () => {
      const bundle = await server.request('GET', '/graphql/assets/graphiql.min.js', PUBLIC);
      assert.equal(bundle.headers['cache-control'], 'public, max-age=300');
      const original = readFileSync(`${ROOT}node_modules/graphiql/graphiql.min.js`, 'utf8');
      assert.match(original, /\n\/\/# sourceMappingURL=graphiql\.min\.js\.map\s*$/);
      assert.doesNotMatch(bundle.text, /sourceMappingURL/);
      assert.equal(bundle.text, original.replace(/\n\/\/# sourceMappingURL=graphiql\.min\.js\.map\s*$/, '\n'));
      const css = await server.request('GET', '/graphql/assets/graphiql.min.css', PUBLIC);
      assert.doesNotMatch(css.text, /sourceMappingURL/);
      assert.equal(
        (await server.request('GET', '/graphql/assets/react.production.min.js', PUBLIC)).text,
        readFileSync(`${ROOT}node_modules/react/umd/react.production.min.js`, 'utf8'),
      );
      for (const [name, file] of [
        ['graphiql.LICENSE', 'graphiql/LICENSE'],
        ['react.LICENSE', 'react/LICENSE'],
        ['react-dom.LICENSE', 'react-dom/LICENSE'],
      ] as const) {
        const licence = await server.request('GET', `/graphql/assets/${name}`, PUBLIC);
        assert.equal(licence.status, 200, name);
        assert.equal(licence.headers['content-type'], 'text/plain; charset=utf-8');
        assert.equal(licence.text, readFileSync(`${ROOT}node_modules/${file}`, 'utf8'));
      }
      const missing = await server.request('GET', '/graphql/assets/app.js', PUBLIC);
      assert.equal(missing.status, 404);
      assert.equal(errorShape(missing).code, 'ROUTE_NOT_FOUND');
      const traversal = await server.request('GET', '/graphql/assets/..%2F..%2Fpackage.json', PUBLIC);
      assert.equal(traversal.status, 404);
      const query = await server.request('GET', '/graphql/assets/graphiql-page.js?x=1', PUBLIC);
      assert.equal(query.status, 400);
      assert.deepEqual(errorShape(query).details, [{ field: 'x', message: 'is not a parameter of this page' }]);
      const post = await server.request('POST', '/graphql/assets/graphiql-page.js', { ...PUBLIC, body: {} });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
    });

    it('every other request is the endpoint’s, as before: JSON Accept, no Accept, any type, a query parameter, POST', async () => {
      // No query: 400 in the uniform body, or 401 first without credentials.
      for (const accept of ['application/json', '*/*', 'application/graphql-response+json', undefined]) {
        const res = await server.request('GET', '/graphql', accept ? { headers: { accept } } : {});
        assert.equal(res.status, 400, `${accept}: ${res.text}`);
        assert.equal(errorShape(res).code, 'BAD_REQUEST');
        assert.equal(res.headers.vary, undefined);
        const anonymous = await server.request('GET', '/graphql', { ...PUBLIC, ...(accept ? { headers: { accept } } : {}) });
        assert.equal(anonymous.status, 401, String(accept));
        assert.equal(anonymous.headers['content-security-policy'], undefined);
      }
      // A query parameter runs the query, even for a browser's Accept (JSON, which it allows at q=0.8).
      const run = await server.request('GET', TYPENAME, { headers: { accept: BROWSER } });
      assert.equal(run.status, 200);
      assert.equal(run.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(run.headers['cache-control'], 'private, no-cache');
      assert.deepEqual(run.body, { data: { __typename: 'Query' } });
      // Other parameters without a query: the endpoint's 400, not the page.
      const named = await server.request('GET', '/graphql?operationName=Q', { headers: { accept: BROWSER } });
      assert.equal(named.status, 400);
      assert.equal(errorShape(named).code, 'BAD_REQUEST');
      // HTML alone with a query: 406, as before.
      const html = await server.request('GET', TYPENAME, { headers: { accept: 'text/html' } });
      assert.equal(html.status, 406);
      assert.equal(errorShape(html).code, 'NOT_ACCEPTABLE');
      // JSON preferred to HTML: the endpoint.
      const prefersJson = await server.request('GET', '/graphql', { headers: { accept: 'text/html;q=0.5, application/json' } });
      assert.equal(prefersJson.status, 400);
      // POST is never the page.
      const post = await server.request('POST', '/graphql', { headers: { accept: BROWSER }, body: { query: '{ __typename }' } });
      assert.equal(post.status, 200);
      assert.deepEqual(post.body, { data: { __typename: 'Query' } });
      assert.equal((await server.request('POST', '/graphql', { headers: { accept: 'text/html' }, body: { query: '{ __typename }' } })).status, 406);
    });

    it('the catalog lists the files as a public operation; the OpenAPI document and /docs link the page', async () => {
      const ops = server.runtime.catalog.operations.filter((op) => op.path.startsWith('/graphql'));
      assert.deepEqual(ops.map((op) => `${op.id} ${op.method} ${op.path} ${op.authentication}`).sort(), [
        'graphql.asset GET /graphql/assets/:asset none',
        'graphql.execute POST /graphql required',
        'graphql.query GET /graphql required',
      ]);
      type Doc = {
        info: { description: string };
        tags: Array<{ name: string; externalDocs?: { url: string } }>;
        paths: Record<string, { get?: { operationId?: string; responses: Record<string, { content?: Record<string, unknown> }> } }>;
      };
      const document = (await server.request('GET', '/v2/openapi.json', PUBLIC)).body as Doc;
      assert.match(document.info.description, /\[GraphiQL\]\(\/graphql\)/);
      assert.equal(document.tags.find((t) => t.name === 'graphql')?.externalDocs?.url, '/graphql');
      assert.equal(document.paths['/graphql/assets/{asset}']?.get?.operationId, 'graphql.asset');
      assert.deepEqual(document.paths['/graphql']?.get?.responses['200']?.content?.['text/html'], {
        schema: {
          type: 'string',
          description: 'GraphiQL, an in-browser GraphQL IDE, as HTML (text/html): its scripts and styles come from `/graphql/assets/`, never from another host.',
        },
      });
      const docs = await server.request('GET', '/docs', { ...PUBLIC, headers: { accept: 'text/html' } });
      assert.match(docs.text, /<a href="\/graphql">GraphQL \(GraphiQL\)<\/a>/);
    });
  });
}

describe('GraphiQL’s session URL under each versioning strategy', () => {
  for (const strategy of ['path', 'query', 'header', 'media-type', 'date'] as const) {
    it(`${strategy}: the URL and headers the page reads the CSRF token from answer a logged-in browser’s session`, async () => {
      const server = await startServer('inject', { versioning: strategy });
      try {
        const page = await server.request('GET', '/graphql', PAGE);
        assert.equal(page.status, 200);
        const url = attribute(page.text, 'data-session-url');
        const headers = JSON.parse(attribute(page.text, 'data-session-headers')) as Record<string, string>;
        // The user and the login at the same version's addresses.
        const users = url.replace('sessions/current', 'users');
        const created = await server.request('POST', users, { key: ADMIN_KEY, headers, body: { email: 'graphiql@example.com', full_name: 'G', password: 'long enough password' } });
        assert.equal(created.status, 201, created.text);
        const login = await server.request('POST', url.replace('/current', ''), { ...PUBLIC, headers, body: { email: 'graphiql@example.com', password: 'long enough password' } });
        assert.equal(login.status, 201, login.text);
        const cookie = login.setCookies.map((c) => c.split(';')[0]).join('; ');
        const session = await server.request('GET', url, { ...PUBLIC, headers: { ...headers, accept: 'application/json', cookie } });
        assert.equal(session.status, 200, `${strategy}: ${url} ${JSON.stringify(headers)}: ${session.text.slice(0, 200)}`);
        assert.equal(session.body.csrf_token, login.body.csrf_token);
      } finally {
        await server.close();
      }
    });
  }
});

describe('GraphiQL and a customer', () => {
  it('the page is the same for everyone; what runs is the caller’s (a customer’s key reaches only what REST shows it)', async () => {
    const server = await startServer('inject');
    try {
      const customer = await createCustomer(server, 'customer@example.com');
      const page = await server.request('GET', '/graphql', { key: customer.key, headers: { accept: BROWSER } });
      assert.equal(page.status, 200);
      assert.equal(page.text, (await server.request('GET', '/graphql', PAGE)).text);
      const users = await server.request('POST', '/graphql', { key: customer.key, body: { query: '{ users(first: 5) { edges { node { email } } } }' } });
      assert.equal(users.status, 200);
      assert.deepEqual(
        (users.body as { data: { users: { edges: Array<{ node: { email: string } }> } } }).data.users.edges.map((e) => e.node.email),
        ['customer@example.com'],
      );
    } finally {
      await server.close();
    }
  });
});
