// Issue 12.5: a session is never created from another site's page (login CSRF), nor by a request carrying a key or token.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { crossSiteReason } from '../../../src/auth/origin-check.js';
import { ADMIN_KEY, createCustomer, errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';

const PASSWORD = 'long enough password';

describe('crossSiteReason', () => {
  const own = (o: string) => o === 'https://api.example.com';
  const cases: Array<[string, { origin?: string; secFetchSite?: string; referer?: string }, boolean]> = [
    ['no browser headers at all (curl)', {}, true],
    ['the own origin', { origin: 'https://api.example.com' }, true],
    ['another origin', { origin: 'https://evil.example' }, false],
    ['another port', { origin: 'https://api.example.com:8443' }, false],
    ['Origin: null', { origin: 'null' }, false],
    ['a malformed Origin', { origin: 'not a url' }, false],
    ['Origin wins over a same-origin Sec-Fetch-Site', { origin: 'https://evil.example', secFetchSite: 'same-origin' }, false],
    ['Sec-Fetch-Site same-origin', { secFetchSite: 'same-origin' }, true],
    ['Sec-Fetch-Site none (typed by the user)', { secFetchSite: 'none' }, true],
    ['Sec-Fetch-Site same-site', { secFetchSite: 'same-site' }, false],
    ['Sec-Fetch-Site cross-site', { secFetchSite: 'cross-site' }, false],
    ['only a Referer of our own', { referer: 'https://api.example.com/login?x=1' }, true],
    ['only a foreign Referer', { referer: 'https://evil.example/page' }, false],
  ];
  for (const [label, source, passes] of cases) {
    it(`${label}: ${passes ? 'passes' : 'refused'}`, () => {
      const reason = crossSiteReason({ origin: source.origin, secFetchSite: source.secFetchSite, referer: source.referer }, own);
      assert.equal(reason === undefined, passes, reason);
    });
  }
});

for (const mode of MODES) {
  describe(`POST /v2/sessions (${mode})`, () => {
    let server: TestServer;
    let email: string;
    let own: string;
    before(async () => {
      server = await startServer(mode, { trustedOrigins: ['https://app.example.com'] });
      email = `csrf-${randomUUID()}@example.com`;
      await createCustomer(server, email);
      own = server.baseUrl ?? 'http://localhost';
    });
    after(async () => server.close());

    const form = `email=${encodeURIComponent('EMAIL')}&password=${encodeURIComponent(PASSWORD)}`;
    const login = (headers: Record<string, string>, key: string | null = null, body?: string) =>
      server.request('POST', '/v2/sessions', {
        key,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: body ?? form.replace('EMAIL', encodeURIComponent(email)),
      });

    it('a form posted from another site’s page is 403 CROSS_SITE_REQUEST and sets no cookie', async () => {
      for (const headers of <Array<Record<string, string>>>[
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
        { referer: 'https://evil.example/login.html' },
      ]) {
        const res = await login(headers);
        assert.equal(res.status, 403, JSON.stringify(headers));
        assert.equal(errorShape(res).code, 'CROSS_SITE_REQUEST');
        assert.deepEqual(res.setCookies, []);
      }
    });

    it('is refused before the body is read: a cross-site login with a broken body is still 403', async () => {
      const res = await login({ origin: 'https://evil.example', 'content-type': 'application/json' }, null, '{not json');
      assert.equal(errorShape(res).code, 'CROSS_SITE_REQUEST');
    });

    it('from the server’s own origin, a trusted origin, a same-origin fetch, or no browser at all: 201', async () => {
      for (const headers of <Array<Record<string, string>>>[
        { origin: own },
        { origin: 'https://app.example.com' },
        { 'sec-fetch-site': 'same-origin' },
        { referer: `${own}/login` },
        {},
      ]) {
        const res = await login(headers);
        assert.equal(res.status, 201, `${JSON.stringify(headers)}: ${res.text}`);
        assert.ok(res.setCookies.some((c) => c.startsWith('canon_session=')));
      }
    });

    it('a login carrying an API key or a bearer token creates no session: 400', async () => {
      for (const [key, headers] of [
        [ADMIN_KEY, {}],
        [null, { authorization: 'Bearer abc.def.ghi' }],
      ] as const) {
        const res = await login(headers, key);
        assert.equal(res.status, 400);
        assert.equal(errorShape(res).code, 'BAD_REQUEST');
        assert.deepEqual(res.setCookies, []);
      }
    });
  });
}
