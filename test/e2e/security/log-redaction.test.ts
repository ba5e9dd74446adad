// Issue 12.7: nothing secret lands in logs: credential-like query parameters and credential headers are redacted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { loggableUrl } from '../../../src/http/transport/loggable-url.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { MODES, startServer, type TestServer } from '../../support/harness.js';

/** Collects every log line a logger writes. */
function capture(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

const SECRETS = ['S3cret-key-1', 'S3cret-token-2', 'S3cret-pass-3', 'S3cret-client-4', 'S3cret-csrf-5', 'S3cret-access-6', 'S3cret-new-7'];

describe('loggableUrl', () => {
  const cases: Array<[string, string]> = [
    ['/v2/products', '/v2/products'],
    ['/v2/products?limit=5&sort=-name', '/v2/products?limit=5&sort=-name'],
    ['/v2/products?api_key=abc&limit=5', '/v2/products?api_key=[REDACTED]&limit=5'],
    [
      '/x?key=a&access_token=b&token=c&password=d&client_secret=e&csrf_token=f',
      '/x?key=[REDACTED]&access_token=[REDACTED]&token=[REDACTED]&password=[REDACTED]&client_secret=[REDACTED]&csrf_token=[REDACTED]',
    ],
    ['/x?API_KEY=a&New_Password=b&webhook%5Fsecret=c', '/x?API_KEY=[REDACTED]&New_Password=[REDACTED]&webhook%5Fsecret=[REDACTED]'],
    ['/x?flag&key', '/x?flag&key'],
    ['/x?%E0%A4%A=1&key=2', '/x?%E0%A4%A=1&key=[REDACTED]'],
  ];
  for (const [url, logged] of cases) it(`${url} → ${logged}`, () => assert.equal(loggableUrl(url), logged));
});

describe('credential headers in any logged object', () => {
  it('are written as [REDACTED] at every level', () => {
    const out = capture();
    const log = createLogger('trace', true, out);
    log.debug(
      {
        headers: { authorization: `Bearer ${SECRETS[1]}`, 'x-api-key': SECRETS[0], cookie: `canon_session=${SECRETS[2]}`, 'x-csrf-token': SECRETS[4], accept: 'application/json' },
      },
      'headers',
    );
    log.trace({ req: { headers: { authorization: `Basic ${SECRETS[3]}`, 'set-cookie': SECRETS[5] } } }, 'nested');
    log.info({ request: { raw: { headers: { 'proxy-authorization': SECRETS[6] } } } }, 'deeper');
    const text = out.lines.join('');
    for (const s of SECRETS) assert.ok(!text.includes(s), `${s} was logged`);
    assert.ok(text.includes('"accept":"application/json"'), 'other headers stay');
    assert.equal(text.match(/\[REDACTED\]/g)?.length, 7);
  });
});

const exploding = defineResource({
  name: 'explosions',
  singular: 'explosion',
  fields: { label: f.string({ required: true }) },
  permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
  hooks: {
    beforeCreate() {
      throw new Error('boom');
    },
  },
});

for (const mode of MODES.filter((m) => !m.endsWith('postgres'))) {
  describe(`the access and error logs (${mode})`, () => {
    let server: TestServer;
    const out = capture();
    before(async () => {
      server = await startServer(mode, { accessLog: true, logLevel: 'info' }, defineApp({ ...commerce, resources: [...commerce.resources, exploding] }), undefined, {
        logger: true,
        logDestination: out,
      });
    });
    after(async () => server.close());

    it('log no credential sent in a query string, on any path, status or error', async () => {
      const query = `api_key=${SECRETS[0]}&token=${SECRETS[1]}&password=${SECRETS[2]}&client_secret=${SECRETS[3]}&csrf_token=${SECRETS[4]}&access_token=${SECRETS[5]}&key=${SECRETS[6]}&limit=1`;
      assert.equal((await server.request('GET', `/v2/products?${query}`)).status, 400, 'unknown parameters are refused');
      assert.equal((await server.request('GET', `/nowhere?${query}`, { key: null })).status, 404);
      assert.equal((await server.request('POST', `/v2/explosions?${query}`, { body: { label: 'x' } })).status, 500);
      const text = out.lines.join('');
      for (const s of SECRETS) assert.ok(!text.includes(s), `${s} was logged`);
      const access = out.lines.map((l) => JSON.parse(l) as { msg: string; url?: string; status?: number }).filter((l) => l.msg === 'request');
      assert.equal(access.length, 3);
      assert.ok(
        access.every((l) => l.url!.includes('api_key=[REDACTED]') && l.url!.endsWith('&limit=1')),
        'names and other parameters stay',
      );
      const failure = out.lines.map((l) => JSON.parse(l) as { msg: string; url?: string }).find((l) => l.msg === 'unhandled error');
      assert.ok(failure?.url?.startsWith('/v2/explosions?api_key=[REDACTED]'));
    });
  });
}
