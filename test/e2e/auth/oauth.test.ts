// OAuth 2.0 client credentials with a real client library (oauth4webapi), then bearer tokens: every way a token must fail.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { importJWK, SignJWT, type JWK } from 'jose';
import { open } from '../../../src/lib/key-crypto.js';
import { SIGNING_KEYS } from '../../../src/platform/internal.js';
import { ADMIN_KEY, errorShape, FakeClock, MODES, startServer, type TestServer } from '../../support/harness.js';

const insecure = { [oauth.allowInsecureRequests]: true };

async function registerClient(server: TestServer, body: Record<string, unknown>): Promise<{ id: string; client_id: string; client_secret: string }> {
  const res = await server.request('POST', '/v2/oauth-clients', { body });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.match(res.body.client_secret, /^cs_/);
  return res.body;
}

/** The client-credentials grant exactly as a standard OAuth client performs it, discovery included. */
async function grant(server: TestServer, client: { client_id: string; client_secret: string }, how: 'basic' | 'post', scope?: string): Promise<oauth.TokenEndpointResponse> {
  const issuer = new URL(server.baseUrl!);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const auth = how === 'basic' ? oauth.ClientSecretBasic(client.client_secret) : oauth.ClientSecretPost(client.client_secret);
  const c: oauth.Client = { client_id: client.client_id };
  const res = await oauth.clientCredentialsGrantRequest(as, c, auth, scope ? { scope } : {}, insecure);
  return oauth.processClientCredentialsResponse(as, c, res);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function tokenRequest(server: TestServer, form: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${server.baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: form });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const bearer = (token: string) => ({ key: null, headers: { authorization: `Bearer ${token}` } });

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`OAuth client credentials and bearer tokens (${mode})`, () => {
    let server: TestServer;
    const clock = new FakeClock(Date.now());
    let client: { id: string; client_id: string; client_secret: string };
    before(async () => {
      server = await startServer(mode, {}, undefined, clock);
      client = await registerClient(server, { name: 'reporting' });
    });
    after(async () => server.close());

    it('publishes metadata whose issuer is the base URL, and a JWKS', async () => {
      const meta = await server.request('GET', '/.well-known/oauth-authorization-server', { key: null });
      assert.equal(meta.status, 200);
      assert.equal(meta.body.issuer, server.baseUrl);
      assert.equal(meta.body.token_endpoint, `${server.baseUrl}/oauth/token`);
      assert.deepEqual(meta.body.grant_types_supported, ['client_credentials']);
      const jwks = await server.request('GET', '/.well-known/jwks.json', { key: null });
      assert.equal(jwks.status, 200);
      assert.ok(jwks.body.keys.length >= 1);
      for (const k of jwks.body.keys) {
        assert.equal(k.kty, 'EC');
        assert.equal(k.alg, 'ES256');
        assert.equal(k.d, undefined, 'no private part is published');
      }
    });

    it('never shows the client secret again', async () => {
      const res = await server.request('GET', `/v2/oauth-clients/${client.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.client_id, client.client_id);
      assert.equal(res.body.client_secret, undefined);
      assert.ok(!res.text.includes(client.client_secret));
      assert.equal(res.body.secret_hash, undefined);
    });

    for (const how of ['basic', 'post'] as const) {
      it(`grants a token to a standard client (client_secret_${how}) that then reads /v2/products`, async () => {
        const token = await grant(server, client, how);
        assert.equal(token.token_type.toLowerCase(), 'bearer');
        assert.equal(token.expires_in, 600);
        const res = await server.request('GET', '/v2/products', bearer(token.access_token));
        assert.equal(res.status, 200);
        assert.equal(res.setCookies.length, 0, 'bearer requests create no session');
        const write = await server.request('POST', '/v2/products', { ...bearer(token.access_token), body: { name: 'By token', price: { amount: 1, currency: 'EUR' } } });
        assert.equal(write.status, 201, 'no CSRF token is needed with a bearer');
      });
    }

    it('answers RFC 6749 errors with no-store', async () => {
      const wrong = await tokenRequest(server, 'grant_type=client_credentials', { authorization: `Basic ${Buffer.from(`${client.client_id}:nope`).toString('base64')}` });
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body.error, 'invalid_client');
      assert.match(wrong.headers.get('www-authenticate') ?? '', /^Basic /);
      assert.equal(wrong.headers.get('cache-control'), 'no-store');
      const unknown = await tokenRequest(server, `grant_type=client_credentials&client_id=cid_nobody&client_secret=x`);
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error, 'invalid_client');
      const creds = `client_id=${encodeURIComponent(client.client_id)}&client_secret=${encodeURIComponent(client.client_secret)}`;
      assert.equal((await tokenRequest(server, creds)).body.error, 'invalid_request');
      assert.equal((await tokenRequest(server, `grant_type=password&${creds}`)).body.error, 'unsupported_grant_type');
      const json = await fetch(`${server.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials' }),
      });
      assert.equal(json.status, 400);
      assert.equal(((await json.json()) as { error: string }).error, 'invalid_request');
      const both = await tokenRequest(server, `grant_type=client_credentials&${creds}`, {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      });
      assert.equal(both.body.error, 'invalid_request');
    });

    it('enforces scopes: a token limited to products:read reads but cannot write', async () => {
      const limited = await registerClient(server, { name: 'reader', scopes: ['products:read', 'orders:read'] });
      await assert.rejects(grant(server, limited, 'basic', 'products:write'), (e: unknown) => (e as { error?: string }).error === 'invalid_scope');
      const token = await grant(server, limited, 'basic', 'products:read');
      assert.equal(token.scope, 'products:read');
      assert.equal((await server.request('GET', '/v2/products', bearer(token.access_token))).status, 200);
      const orders = await server.request('GET', '/v2/orders', bearer(token.access_token));
      assert.equal(orders.status, 403);
      assert.equal(errorShape(orders).code, 'INSUFFICIENT_SCOPE');
      const write = await server.request('POST', '/v2/products', { ...bearer(token.access_token), body: { name: 'x', price: { amount: 1, currency: 'EUR' } } });
      assert.equal(write.status, 403);
      assert.equal(errorShape(write).code, 'INSUFFICIENT_SCOPE');
      assert.match(write.headers['www-authenticate'] ?? '', /error="insufficient_scope", scope="products:write"/);
    });

    describe('refused tokens', () => {
      let good: string;
      let privateJwk: JWK;
      let kid: string;
      before(async () => {
        good = (await grant(server, client, 'basic')).access_token;
        const { rows } = await server.runtime.store.list(SIGNING_KEYS, {
          where: [{ path: 'retired_at', op: 'eq', value: null }],
          orderBy: [{ path: 'id', desc: false }],
          limit: 1,
        });
        privateJwk = JSON.parse(open(String(rows[0]!.private_jwk), 'test-secret')) as JWK;
        kid = String(rows[0]!.kid);
      });
      const refused = async (token: string, why: string): Promise<void> => {
        const res = await server.request('GET', '/v2/products', bearer(token));
        assert.equal(res.status, 401, `${why}: ${res.status}`);
        assert.equal(errorShape(res).code, 'UNAUTHENTICATED');
        assert.match(res.headers['www-authenticate'] ?? '', /^Bearer realm="canon", error="invalid_token"/, why);
      };
      /** A token signed with the server's own key but with chosen claims: only the claim under test is wrong. */
      const forge = async (claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> => {
        const now = Math.floor(clock.now().getTime() / 1000);
        return new SignJWT({ client_id: client.client_id, ...claims })
          .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...header })
          .setIssuedAt(now)
          .setNotBefore(now)
          .setExpirationTime(now + 600)
          .setSubject(client.client_id)
          .setIssuer(String(claims.iss ?? server.baseUrl))
          .setAudience(String(claims.aud ?? server.baseUrl))
          .sign(await importJWK(privateJwk, 'ES256'));
      };

      it('accepts a forged-here token with correct claims (the forge itself is sound)', async () => {
        assert.equal((await server.request('GET', '/v2/products', bearer(await forge({})))).status, 200);
      });

      it('refuses an expired token', async () => {
        clock.advance(601);
        try {
          await refused(good, 'expired');
        } finally {
          clock.advance(-601);
        }
      });

      it('refuses a token not yet valid (nbf)', async () => {
        const now = Math.floor(clock.now().getTime() / 1000);
        const early = await new SignJWT({ client_id: client.client_id })
          .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
          .setIssuedAt(now)
          .setNotBefore(now + 120)
          .setExpirationTime(now + 600)
          .setSubject(client.client_id)
          .setIssuer(server.baseUrl!)
          .setAudience(server.baseUrl!)
          .sign(await importJWK(privateJwk, 'ES256'));
        await refused(early, 'nbf');
      });

      it('refuses alg "none"', async () => {
        const [, payload] = good.split('.');
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid })).toString('base64url');
        await refused(`${header}.${payload}.`, 'alg none');
      });

      it('refuses HS256 signed with the public key (algorithm confusion)', async () => {
        const jwks = await server.request('GET', '/.well-known/jwks.json', { key: null });
        const publicJwk = JSON.stringify(jwks.body.keys[0]);
        const [, payload] = good.split('.');
        const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid })).toString('base64url');
        const mac = createHmac('sha256', publicJwk).update(`${header}.${payload}`).digest('base64url');
        await refused(`${header}.${payload}.${mac}`, 'HS256 with the public key');
      });

      it('refuses a wrong audience, a wrong issuer, a wrong typ and an unknown kid', async () => {
        await refused(await forge({ aud: 'https://someone-else.example' }), 'audience');
        await refused(await forge({ iss: 'https://evil.example' }), 'issuer');
        await refused(await forge({}, { typ: 'JWT' }), 'typ');
        await refused(await forge({}, { kid: 'unknown-kid' }), 'kid');
      });

      it('refuses a tampered token', async () => {
        const [h, p, s] = good.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
        const tampered = Buffer.from(JSON.stringify({ ...claims, scope: '*' })).toString('base64url');
        await refused(`${h}.${tampered}.${s}`, 'tampered payload');
        await refused(`${h}.${p}.${s.slice(0, -4)}AAAA`, 'tampered signature');
        await refused('not-a-jwt', 'garbage');
      });

      it('an API key header is not a bearer and a bearer is not an API key', async () => {
        const res = await server.request('GET', '/v2/products', { key: null, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
        assert.equal(res.status, 401);
        const basic = await server.request('GET', '/v2/products', { key: null, headers: { authorization: 'Basic YTpi' } });
        assert.equal(basic.status, 401);
      });
    });

    it('rotates signing keys: old tokens keep working, new ones carry the new kid, the JWKS lists both', async () => {
      const before = await grant(server, client, 'basic');
      const oldKid = JSON.parse(Buffer.from(before.access_token.split('.')[0]!, 'base64url').toString()).kid;
      const newKid = await server.runtime.signingKeys.rotate();
      assert.notEqual(newKid, oldKid);
      const afterToken = await grant(server, client, 'basic');
      assert.equal(JSON.parse(Buffer.from(afterToken.access_token.split('.')[0]!, 'base64url').toString()).kid, newKid);
      for (const t of [before, afterToken]) assert.equal((await server.request('GET', '/v2/products', bearer(t.access_token))).status, 200);
      const jwks = await server.request('GET', '/.well-known/jwks.json', { key: null });
      const kids = jwks.body.keys.map((k: { kid: string }) => k.kid);
      assert.ok(kids.includes(oldKid) && kids.includes(newKid));
      // Once every token the old key signed has expired, the key is no longer published.
      clock.advance(600 + 61);
      try {
        const later = await server.request('GET', '/.well-known/jwks.json', { key: null });
        assert.deepEqual(
          later.body.keys.map((k: { kid: string }) => k.kid),
          [newKid],
        );
        await assert.rejects(async () => assert.equal((await server.request('GET', '/v2/products', bearer(before.access_token))).status, 200));
      } finally {
        clock.advance(-(600 + 61));
      }
    });
  });
}
