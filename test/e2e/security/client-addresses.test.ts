// Issue 12.6: per-IP limits count a client once however its address is spelled, and IPv6 clients by their /64.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addressKey } from '../../../src/limits/client-address.js';
import { GENEROUS_LIMITS, startServer, type TestServer } from '../../support/harness.js';

describe('addressKey', () => {
  const cases: Array<[string, number, string]> = [
    ['198.51.100.7', 64, '198.51.100.7'],
    ['::ffff:198.51.100.7', 64, '198.51.100.7'],
    ['::FFFF:c633:6407', 64, '198.51.100.7'],
    ['2001:db8::1', 64, '2001:db8::/64'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', 64, '2001:db8::/64'],
    ['2001:db8::ffff:ffff:ffff:ffff', 64, '2001:db8::/64'],
    ['2001:db8:0:1::1', 64, '2001:db8:0:1::/64'],
    ['2001:db8:0:1::1', 48, '2001:db8::/48'],
    ['2001:db8:0:1::1', 128, '2001:db8:0:1::1'],
    ['::1', 64, '::/64'],
    ['not an address', 64, 'not an address'],
  ];
  for (const [address, prefix, key] of cases) {
    it(`${address} /${prefix} → ${key}`, () => assert.equal(addressKey(address, prefix), key));
  }
});

describe('per-IP limits over HTTP, behind a trusted proxy', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('inject', { trustProxy: true, rateLimits: { ...GENEROUS_LIMITS, perIp: { limit: 2, periodSeconds: 600 } } });
  });
  after(async () => server.close());

  const anonymous = (address: string) => server.request('GET', '/v2/products', { key: null, headers: { 'x-forwarded-for': address } });

  it('an IPv4 address and its IPv4-mapped IPv6 spelling share one budget', async () => {
    assert.equal((await anonymous('198.51.100.7')).status, 401);
    assert.equal((await anonymous('::ffff:198.51.100.7')).status, 401);
    const third = await anonymous('::ffff:c633:6407');
    assert.equal(third.status, 429);
    assert.equal(third.headers['x-ratelimit-remaining'], '0');
  });

  it('IPv6 addresses of one /64 share one budget, in any spelling; another /64 has its own', async () => {
    assert.equal((await anonymous('2001:db8:aa::1')).status, 401);
    assert.equal((await anonymous('2001:0db8:00aa:0000:0000:0000:0000:0002')).status, 401);
    assert.equal((await anonymous('2001:db8:aa::ffff:1')).status, 429);
    assert.equal((await anonymous('2001:db8:aa:1::1')).status, 401, 'the next /64 is another client');
  });
});
