// The checker's HTTP client (src/check/probe.ts): redirects only within the base origin, a request budget, a 429 as its own trouble.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Probe, ProbeError } from '../../../src/check/probe.js';

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    handler!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('check: the probe client', () => {
  let other: Awaited<ReturnType<typeof serve>>;
  let api: Awaited<ReturnType<typeof serve>>;

  before(async () => {
    other = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"elsewhere":true}'));
    api = await serve((req, res) => {
      if (req.url === '/here') return void res.writeHead(302, { location: '/there' }).end();
      if (req.url === '/away') return void res.writeHead(302, { location: `${other.url}/stolen` }).end();
      if (req.url === '/limited') return void res.writeHead(429, { 'retry-after': '7' }).end();
      res.writeHead(200, { 'content-type': 'application/json', 'x-seen': req.headers['x-api-key'] ?? 'none' }).end('{"ok":true}');
    });
  });
  after(async () => {
    api.server.closeAllConnections();
    other.server.closeAllConnections();
    await new Promise((resolve) => api.server.close(resolve));
    await new Promise((resolve) => other.server.close(resolve));
  });

  const probe = (maxRequests = 20): Probe => new Probe({ baseUrl: new URL(api.url), headers: [['X-API-Key', 'k1']], maxRequests, timeoutMs: 2000, rate: 500, ca: undefined });

  it('follows a redirect within the origin, and not one that leaves it', async () => {
    const p = probe();
    const followed = await p.send('GET', '/here');
    assert.equal(followed.status, 200);
    assert.equal(followed.url.pathname, '/there');
    assert.deepEqual(followed.json, { ok: true });
    const kept = await p.send('GET', '/away');
    assert.equal(kept.status, 302);
    assert.equal(kept.headers.location, `${other.url}/stolen`);
    assert.deepEqual(other.seen, []);
    assert.equal(p.count, 3);
    await assert.rejects(p.send('GET', `${other.url}/direct`), (err: unknown) => err instanceof ProbeError && /refusing to leave the base URL's origin/.test(err.message));
    assert.deepEqual(other.seen, []);
    await p.close();
  });

  it('sends the --header values unless told not to', async () => {
    const p = probe();
    assert.equal((await p.send('GET', '/x')).headers['x-seen'], 'k1');
    assert.equal((await p.send('GET', '/x', { auth: false })).headers['x-seen'], 'none');
    await p.close();
  });

  it('stops at its request budget, except to delete what it created', async () => {
    const p = probe(2);
    await p.send('GET', '/a');
    await p.send('GET', '/b');
    await assert.rejects(p.send('GET', '/c'), (err: unknown) => err instanceof ProbeError && err.message === 'request budget exhausted (--max-requests 2)');
    assert.equal((await p.send('DELETE', '/d', { cleanup: true })).status, 200);
    assert.deepEqual(api.seen.slice(-3), ['GET /a', 'GET /b', 'DELETE /d']);
    await p.close();
  });

  it('takes a 429 as its own volume (an error), unless the request looks for one', async () => {
    const p = probe();
    await assert.rejects(p.send('GET', '/limited'), (err: unknown) => err instanceof ProbeError && /^rate limited \(429, Retry-After 7\)/.test(err.message));
    assert.equal((await p.send('GET', '/limited', { expect429: true })).status, 429);
    await p.close();
  });
});
