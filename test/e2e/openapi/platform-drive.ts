// What the Prism test sends to the platform's operations: health, metrics, events, discovery, guides, the documents themselves, GraphQL and GraphiQL, the OAuth token endpoint and cookie sessions.
import assert from 'node:assert/strict';
import { DOCS_ASSETS } from '../../../src/catalog/docs-operations.js';
import { GRAPHIQL_ASSETS } from '../../../src/catalog/graphiql-operations.js';
import { expectError } from '../resources/expect.js';
import type { Actors } from './prism-drive.js';
import { PASSWORD } from './prism-drive.js';
import type { DocName, ProxyClient } from './proxy-client.js';

/** The public and operator operations every document lists. */
export async function drivePlatform(c: ProxyClient, v: DocName): Promise<void> {
  await c.send(v, 'GET', '/healthz', { key: null, expect: 200 });
  await c.send(v, 'GET', '/readyz', { key: null, expect: 200 });
  await c.send(v, 'GET', '/metrics', { expect: 200 });
  const events = await c.send(v, 'GET', '/events?limit=5&type=product.*', { expect: 200 });
  assert.ok(events.body.data.length > 0, 'earlier requests wrote product events');
  expectError(await c.send(v, 'GET', '/events?limit=500', { expect: 400, invalid: true }), 400, 'INVALID_QUERY');
  await c.send(v, 'GET', '/.well-known/oauth-authorization-server', { key: null, expect: 200 });
  await c.send(v, 'GET', '/.well-known/jwks.json', { key: null, expect: 200 });
  const guide = await c.send(v, 'GET', '/docs/migrations/v1-to-v2', { key: null, headers: { accept: 'text/markdown' }, expect: 200 });
  assert.match(guide.headers['content-type'] ?? '', /^text\/markdown/);
  expectError(await c.send(v, 'GET', '/docs/migrations/v1-to-v9', { key: null, expect: 404 }), 404, 'ROUTE_NOT_FOUND');
  // The reference for people (/docs): the page of this version, the renderer's files, the changelog.
  await c.send(v, 'GET', `/docs?version=${v}`, { key: null, headers: { accept: 'text/html' }, expect: 200 });
  for (const name of DOCS_ASSETS) await c.send(v, 'GET', `/docs/assets/${name}`, { key: null, expect: 200 });
  await c.send(v, 'GET', '/docs/changelog', { key: null, headers: { accept: 'text/markdown' }, expect: 200 });
  // GraphQL (docs/graphql.md): a query by GET and by POST, in application/json.
  const query = '{ products(first: 1) { edges { node { id name } } pageInfo { hasNextPage } } }';
  const posted = await c.send(v, 'POST', '/graphql', { json: { query }, headers: { accept: 'application/json' }, expect: 200 });
  assert.ok(Array.isArray(posted.body.data.products.edges));
  await c.send(v, 'GET', `/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json' }, expect: 200 });
  // GraphiQL: /graphql opened by a browser, and the files it loads. With a key: Prism enforces the operation's
  // security, which is the endpoint's (OpenAPI has no security per response type); the page ignores credentials.
  await c.send(v, 'GET', '/graphql', { headers: { accept: 'text/html' }, expect: 200 });
  for (const name of GRAPHIQL_ASSETS) await c.send(v, 'GET', `/graphql/assets/${name}`, { key: null, expect: 200 });
  const doc = await c.send(v, 'GET', `/${v}/openapi.json`, { key: null, expect: 200 });
  await c.send(v, 'GET', `/${v}/openapi.json`, { key: null, headers: { 'if-none-match': doc.headers.etag! }, expect: 304 });
}

/** The client-credentials grant with HTTP Basic (RFC 6749 §4.4), then the token as a bearer credential. */
export async function driveOAuth(c: ProxyClient, v: DocName): Promise<void> {
  const client = await c.send(v, 'POST', `/${v}/oauth-clients`, { json: { name: 'Prism token client', scopes: ['products:read'] }, expect: 201 });
  const basic = `Basic ${Buffer.from(`${client.body.client_id}:${client.body.client_secret}`).toString('base64')}`;
  const token = await c.send(v, 'POST', '/oauth/token', {
    key: null,
    headers: { authorization: basic },
    form: { grant_type: 'client_credentials', scope: 'products:read' },
    expect: 200,
  });
  assert.equal(token.body.token_type, 'Bearer');
  await c.send(v, 'GET', `/${v}/products`, { key: null, headers: { authorization: `Bearer ${token.body.access_token}` }, expect: 200 });
  const wrong = `Basic ${Buffer.from(`${client.body.client_id}:cs_wrong`).toString('base64')}`;
  const refused = await c.send(v, 'POST', '/oauth/token', { key: null, headers: { authorization: wrong }, form: { grant_type: 'client_credentials' }, expect: 401 });
  assert.equal(refused.body.error, 'invalid_client');
}

/** Cookie sessions (newest version only): JSON and form logins, the current session, a password change and logout with the CSRF token. */
export async function driveSessions(c: ProxyClient, v: DocName, actors: Actors & { customerEmail: string }): Promise<void> {
  const login = await c.send(v, 'POST', `/${v}/sessions`, { key: null, json: { email: actors.customerEmail, password: PASSWORD }, expect: 201 });
  const session = /canon_session=([^;]+)/.exec(login.setCookies.join('\n'))?.[1];
  assert.ok(session, `a session cookie: ${login.setCookies.join(' | ')}`);
  const cookie = { cookie: `canon_session=${session}` };
  const csrf = login.body.csrf_token as string;
  await c.send(v, 'GET', `/${v}/sessions/current`, { key: null, headers: cookie, expect: 200 });
  await c.send(v, 'GET', `/${v}/products`, { key: null, headers: cookie, expect: 200 });
  expectError(await c.send(v, 'DELETE', `/${v}/sessions/current`, { key: null, headers: cookie, expect: 403 }), 403, 'CSRF_TOKEN_INVALID');
  await c.send(v, 'PUT', `/${v}/users/${actors.customer.userId}/password`, {
    key: null,
    headers: { ...cookie, 'x-csrf-token': csrf },
    json: { current_password: PASSWORD, new_password: `${PASSWORD} again` },
    expect: 204,
  });
  const form = await c.send(v, 'POST', `/${v}/sessions`, { key: null, form: { email: actors.customerEmail, password: `${PASSWORD} again` }, expect: 201 });
  const formSession = /canon_session=([^;]+)/.exec(form.setCookies.join('\n'))?.[1];
  await c.send(v, 'DELETE', `/${v}/sessions/current`, { key: null, headers: { cookie: `canon_session=${formSession}`, 'x-csrf-token': form.body.csrf_token }, expect: 204 });
  expectError(await c.send(v, 'POST', `/${v}/sessions`, { key: null, json: { email: actors.customerEmail, password: 'wrong password' }, expect: 401 }), 401, 'UNAUTHENTICATED');
  expectError(await c.send(v, 'GET', `/${v}/sessions/current`, { headers: { cookie: 'canon_session=' + 'A'.repeat(43) }, key: null, expect: 401 }), 401, 'UNAUTHENTICATED');
}
