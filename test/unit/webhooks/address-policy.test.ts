// Issue 15.4 (SSRF): webhook URLs are https with public addresses only, every spelling of a private address is refused, and the check holds on the address actually connected to (DNS rebinding).
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { addressVerdict, guardedLookup, urlVerdict, type Resolver } from '../../../src/webhooks/address-policy.js';

describe('addressVerdict', () => {
  const refused = [
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.10',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '0.1.2.3',
    '255.255.255.255',
    '224.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '240.0.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:a00:1::',
    '2001::1',
    '2001:db8::1',
    'ff02::1',
    'not an address',
  ];
  for (const address of refused) it(`refuses ${address}`, () => assert.equal(addressVerdict(address).allowed, false));
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8']) it(`allows ${address}`, () => assert.deepEqual(addressVerdict(address), { allowed: true }));

  // Issue 26.7: an IPv4-compatible IPv6 address (::a.b.c.d, first 96 bits zero; RFC 4291 §2.5.5.1) is judged by the IPv4 address inside.
  const compatible: Array<[string, RegExp | true]> = [
    ['::7f00:1', /::7f00:1 is 127\.0\.0\.1, in a loopback range/],
    ['::127.0.0.1', /loopback/],
    ['0:0:0:0:0:0:7f00:1', /is 127\.0\.0\.1, in a loopback range/],
    ['0::127.0.0.1', /is 127\.0\.0\.1, in a loopback range/],
    ['::a9fe:a9fe', /is 169\.254\.169\.254, in a linkLocal range/],
    ['::a00:1', /is 10\.0\.0\.1, in a private range/],
    ['::c0a8:101', /is 192\.168\.1\.1, in a private range/],
    ['::ac10:1', /is 172\.16\.0\.1, in a private range/],
    ['::6440:1', /is 100\.64\.0\.1, in a carrierGradeNat range/],
    ['::e000:1', /is 224\.0\.0\.1, in a multicast range/],
    ['::ffff:ffff', /is 255\.255\.255\.255, in a broadcast range/],
    ['::2', /is 0\.0\.0\.2, in a unspecified range/],
    ['::1', /::1 is in a loopback range/],
    ['::', /:: is in a unspecified range/],
    // Allowed: a public IPv4 address inside, and public IPv6 addresses that merely end like a private IPv4 one.
    ['::808:808', true],
    ['::8.8.8.8', true],
    ['2001:4860:4860::7f00:1', true],
    ['2606:4700::a9fe:a9fe', true],
  ];
  for (const [address, expected] of compatible) {
    it(`${expected === true ? 'allows' : 'refuses'} ${address} (IPv4-compatible form)`, () => {
      const verdict = addressVerdict(address);
      if (expected === true) assert.deepEqual(verdict, { allowed: true });
      else {
        assert.equal(verdict.allowed, false, JSON.stringify(verdict));
        assert.match((verdict as { reason: string }).reason, expected);
      }
    });
  }
  it('names the range it refused', () => assert.deepEqual(addressVerdict('169.254.169.254'), { allowed: false, reason: '169.254.169.254 is in a linkLocal range' }));
});

describe('urlVerdict', () => {
  const resolver =
    (table: Record<string, string[]>): Resolver =>
    async (host) => {
      if (!(host in table)) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return table[host]!;
    };
  const policy = {
    allowPrivate: false,
    resolve: resolver({ 'hooks.example.com': ['93.184.216.34'], 'inside.example.com': ['93.184.216.34', '10.0.0.5'], localhost: ['127.0.0.1', '::1'], 'empty.example.com': [] }),
  };
  const cases: Array<[string, boolean, RegExp?]> = [
    ['https://hooks.example.com/canon', true],
    ['http://hooks.example.com/canon', false, /https/],
    ['https://user:secret@hooks.example.com/', false, /credentials/],
    ['https://inside.example.com/', false, /10\.0\.0\.5/],
    ['https://localhost/', false, /loopback/],
    ['https://nowhere.example.com/', false, /does not resolve/],
    ['https://empty.example.com/', false, /does not resolve/],
    // Every spelling of 127.0.0.1 the URL parser accepts becomes 127.0.0.1 before the check.
    ['https://0x7f.1/', false, /loopback/],
    ['https://2130706433/', false, /loopback/],
    ['https://0177.0.0.1/', false, /loopback/],
    ['https://127.1/', false, /loopback/],
    ['https://[::ffff:7f00:1]/', false, /loopback/],
    ['https://[::1]:8443/', false, /loopback/],
    // Issue 26.7: IPv4-compatible IPv6 literals; the URL parser turns [::127.0.0.1] into [::7f00:1].
    ['https://[::127.0.0.1]/', false, /127\.0\.0\.1, in a loopback range/],
    ['https://[::7f00:1]/', false, /127\.0\.0\.1, in a loopback range/],
    ['https://[0:0:0:0:0:0:127.0.0.1]:8443/', false, /127\.0\.0\.1, in a loopback range/],
    ['https://[::a9fe:a9fe]/latest/meta-data/', false, /169\.254\.169\.254, in a linkLocal range/],
    ['https://[::169.254.169.254]/', false, /linkLocal/],
    ['https://[::10.0.0.1]/', false, /private/],
    ['https://[::8.8.8.8]/hook', true],
    ['https://[2606:4700::1111]/hook', true],
    ['https://169.254.169.254/latest/meta-data/', false, /linkLocal/],
    ['https://8.8.8.8/hook', true],
    ['not a url', false, /not a URL/],
  ];
  for (const [url, allowed, reason] of cases) {
    it(`${allowed ? 'allows' : 'refuses'} ${url}`, async () => {
      const verdict = await urlVerdict(url, policy);
      assert.equal(verdict.allowed, allowed, JSON.stringify(verdict));
      if (!verdict.allowed && reason) assert.match(verdict.reason, reason);
    });
  }
  it('CANON_WEBHOOK_ALLOW_PRIVATE lifts the address check, not the scheme or credential checks', async () => {
    const open = { ...policy, allowPrivate: true };
    assert.deepEqual(await urlVerdict('https://localhost/', open), { allowed: true });
    assert.equal((await urlVerdict('http://localhost/', open)).allowed, false);
    assert.equal((await urlVerdict('https://u:p@localhost/', open)).allowed, false);
  });
});

describe('guardedLookup: the check on the address connected to', () => {
  let server: ReturnType<typeof createServer>;
  let port: number;
  before(async () => {
    server = createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // A name that was public when registered and points inside now (DNS rebinding).
  const rebinding: Resolver = async () => ['127.0.0.1'];
  const dial = (lookup: ReturnType<typeof guardedLookup>): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: 'rebound.example.com', port, lookup: lookup as never, timeout: 2000 });
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
      socket.on('timeout', () => socket.destroy(new Error('timeout')));
    });

  it('refuses to connect to a private address whatever the name resolved to before', async () => {
    await assert.rejects(
      dial(guardedLookup({ allowPrivate: false, resolve: rebinding })),
      (err: NodeJS.ErrnoException) => err.code === 'EADDRNOTALLOWED' && /127\.0\.0\.1 is in a loopback range/.test(err.message),
    );
  });

  it('refuses a name whose only address is an IPv4-compatible IPv6 spelling of a private one (AAAA ::7f00:1)', async () => {
    await assert.rejects(
      dial(guardedLookup({ allowPrivate: false, resolve: async () => ['::7f00:1', '::a9fe:a9fe'] })),
      (err: NodeJS.ErrnoException) => err.code === 'EADDRNOTALLOWED' && /127\.0\.0\.1, in a loopback range.*169\.254\.169\.254, in a linkLocal range/.test(err.message),
    );
  });

  it('connects when private addresses are allowed', async () => {
    assert.equal(await dial(guardedLookup({ allowPrivate: true, resolve: rebinding })), 'hello');
  });
});
