// canon-client's optional ETag cache (issue 28.4): a repeated GET asks If-None-Match and a 304 is answered from memory, for objects and pages; a change on the server is seen at once; the cache is bounded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type TestServer } from '../support/harness.js';
import { canon, recordingFetch } from './support.js';

const { createClient, responseOf } = canon;

describe('canon-client ETag cache', () => {
  let server: TestServer;
  let ids: string[];
  before(async () => {
    server = await startServer('listen');
    ids = [];
    for (let i = 0; i < 3; i++) ids.push((await server.request('POST', '/v2/products', { body: { name: `Cached ${i}`, price: { amount: 100, currency: 'EUR' } } })).body.id);
  });
  after(async () => server.close());

  it('a repeat GET is a 304 answered with the kept body, a fresh copy each time; a change on the server is a 200 again', async () => {
    const recorder = recordingFetch();
    const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, cache: true, fetch: recorder.fetch });
    const first = await c.products.get(ids[0]!);
    assert.equal(responseOf(first)?.fromCache, false);
    first.name = 'changed by the caller';
    const second = await c.products.get(ids[0]!);
    assert.equal(recorder.sent[1]!.headers['if-none-match'], responseOf(first)!.etag);
    assert.equal(responseOf(second)?.status, 304);
    assert.equal(responseOf(second)?.fromCache, true);
    assert.equal(second.name, 'Cached 0', 'a fresh parse: the caller’s change to the first copy is not in it');
    await server.request('PATCH', `/v2/products/${ids[0]}`, { body: { name: 'Renamed' } });
    const third = await c.products.get(ids[0]!);
    assert.equal(third.name, 'Renamed');
    assert.equal(responseOf(third)?.fromCache, false);
    // An explicit If-None-Match naming the cached version is answered from the cache too.
    const fourth = await c.products.get(ids[0]!, { ifNoneMatch: responseOf(third)!.etag! });
    assert.equal(fourth?.name, 'Renamed');
  });

  it('list pages are cached the same way (weak ETags, RFC 9110 §13.1.2)', async () => {
    const recorder = recordingFetch();
    const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, cache: true, fetch: recorder.fetch });
    const walk = async () => {
      const names: string[] = [];
      for await (const p of c.products.list({ limit: 2, sort: 'name' })) names.push(p.name!);
      return names;
    };
    const once = await walk();
    const twice = await walk();
    assert.deepEqual(twice, once);
    assert.equal(recorder.sent.length, 4);
    assert.ok(recorder.sent.slice(2).every((s) => (s.headers['if-none-match'] ?? '').startsWith('W/"')));
  });

  it('without the cache nothing is kept; a bounded cache drops its least recently used entry', async () => {
    const recorder = recordingFetch();
    const plain = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, fetch: recorder.fetch });
    await plain.products.get(ids[1]!);
    await plain.products.get(ids[1]!);
    assert.equal(recorder.sent[1]!.headers['if-none-match'], undefined);

    const small = recordingFetch();
    const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, cache: { maxEntries: 2 }, fetch: small.fetch });
    for (const id of [ids[0]!, ids[1]!, ids[2]!, ids[2]!, ids[0]!]) await c.products.get(id);
    assert.deepEqual(
      small.sent.map((s) => s.headers['if-none-match'] !== undefined),
      [false, false, false, true, false],
      'the third entry evicted the first',
    );
    assert.throws(() => createClient({ baseUrl: server.baseUrl!, cache: { maxEntries: 0 } }), /maxEntries must be a positive integer/);
  });
});
