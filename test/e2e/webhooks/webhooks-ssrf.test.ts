// Issue 15 (DESIGN §9, SSRF): without CANON_WEBHOOK_ALLOW_PRIVATE, /v2/webhook-endpoints refuses http:// and every spelling of a private, loopback, link-local, CGNAT, ULA or metadata target (422 VALIDATION_ERROR on `url`), on create and on update.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorShape, startServer, type TestServer } from '../../support/harness.js';

/** Refused at registration; none needs DNS (IP literals, or refused before any lookup). */
const REFUSED = [
  'http://93.184.216.34/hook',
  'https://127.0.0.1/hook',
  'https://[::1]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://0.0.0.0/hook',
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/hook',
  'https://100.64.0.1/hook',
  'https://[fd00::1]/hook',
  'https://2130706433/hook',
  'https://0x7f.1/hook',
  'https://user:pass@example.com/hook',
  'https://192.168.1.1/hook',
  'https://172.16.0.1/hook',
  'https://[fe80::1]/hook',
  'https://127.1/hook',
  // IPv4-compatible IPv6 (issue 26.7): judged by the IPv4 address inside.
  'https://[::127.0.0.1]/hook',
  'https://[::7f00:1]/hook',
  'https://[::a9fe:a9fe]/latest/meta-data/',
];

describe('webhook endpoint registration without CANON_WEBHOOK_ALLOW_PRIVATE', () => {
  let server: TestServer;
  before(async () => {
    // The harness leaves webhookAllowPrivate at its default, false: the production policy.
    server = await startServer('inject');
    assert.equal(server.runtime.config.webhookAllowPrivate, false);
  });
  after(async () => server.close());

  for (const url of REFUSED) {
    it(`refuses ${url} with 422 VALIDATION_ERROR on url`, async () => {
      const res = await server.request('POST', '/v2/webhook-endpoints', { body: { url, events: ['order.*'] } });
      assert.equal(res.status, 422, res.text);
      const error = errorShape(res);
      assert.equal(error.code, 'VALIDATION_ERROR');
      const detail = error.details?.find((d) => d.field === 'url');
      assert.ok(detail, res.text);
      assert.equal(typeof detail.message, 'string');
    });
  }

  it('registered nothing for the refused URLs', async () => {
    const list = await server.request('GET', '/v2/webhook-endpoints');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, []);
  });

  it('accepts a public https target and refuses moving it to a private one (PATCH 422, unchanged)', async () => {
    const created = await server.request('POST', '/v2/webhook-endpoints', { body: { url: 'https://93.184.216.34/hook', events: ['order.*'] } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.secret, /^whsec_/);
    for (const url of ['https://127.0.0.1/hook', 'https://[::ffff:169.254.169.254]/', 'http://93.184.216.34/hook']) {
      const patched = await server.request('PATCH', `/v2/webhook-endpoints/${created.body.id}`, { body: { url } });
      assert.equal(patched.status, 422, `${url}: ${patched.text}`);
      assert.equal(errorShape(patched).code, 'VALIDATION_ERROR');
      assert.ok(errorShape(patched).details?.some((d) => d.field === 'url'));
    }
    const read = await server.request('GET', `/v2/webhook-endpoints/${created.body.id}`);
    assert.equal(read.body.url, 'https://93.184.216.34/hook');
  });
});
