// The generic collection suite: every collection of the reference domain, 1,000 rows, every pagination style (run per store and half by walk-*.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SYSTEM } from '../../../src/model/principal.js';
import { publicView } from '../../../src/services/views.js';
import { startServer, type Mode, type TestServer } from '../../support/harness.js';
import { comparator, fixtures, type CollectionFixture } from './fixtures.js';

const ROWS = 1000;
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Follows `next` from the first page; returns every object seen, bounded by a page count. */
async function walk(server: TestServer, first: string, nextOf: (body: Obj, url: string) => string | undefined, between?: () => Promise<void>): Promise<Obj[]> {
  const seen: Obj[] = [];
  let url: string | undefined = first;
  for (let pages = 0; url && pages < 200; pages++) {
    const res = await server.request('GET', url);
    assert.equal(res.status, 200, `${url}: ${res.text}`);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    seen.push(...res.body.data);
    const next = nextOf(res.body, url);
    if (next) assert.match(res.headers.link ?? '', /rel="next"/);
    url = next;
    if (url && between) await between();
  }
  return seen;
}

const href = (body: Obj, rel: string): string | undefined => body.links.find((l: Obj) => l.rel === rel)?.href;

/** `indexes` picks fixtures by position (their paths hold ids known only once the server runs). */
function suite(mode: Mode, indexes: number[]): void {
  describe(`collections walk (${mode})`, () => {
    let server: TestServer;
    let all: CollectionFixture[];
    before(async () => {
      server = await startServer(mode);
      all = await fixtures(server);
    });
    after(async () => server.close());

    // Fixture paths are only known once the server runs, so the tests iterate inside one `it` per fixture index.
    for (const index of indexes) {
      it(`fixture ${index}: every style returns every row once, in order, under a filter and a two-field sort`, async () => {
        const f = all[index]!;
        const services = server.runtime.services;
        const resource = services.resource(f.resource);
        // Eight at a time: on PostgreSQL one at a time spent most of the file's 30 s on commit round trips.
        for (let i = 0; i < ROWS; i += 8) await Promise.all(Array.from({ length: Math.min(8, ROWS - i) }, (_, j) => f.make(i + j)));
        // Expected: every object of the collection (read back through the services, not the HTTP list under test).
        const base = `${f.path}?${new URLSearchParams(f.filter).toString()}`;
        const everything = await services.list({ principal: SYSTEM }, f.resource, { where: [], orderBy: [{ path: 'id', desc: false }], limit: 100_000 });
        const parentFilter = f.path.split('/').length > 3 ? (o: Obj) => Object.values(o).includes(f.path.split('/')[3]) : () => true;
        const expected = everything.rows.map((l) => publicView(resource, l.record)).filter((o) => f.matches(o) && parentFilter(o));
        assert.ok(expected.length > 100, `${f.path}: only ${expected.length} rows match`);
        const ids = (objs: Obj[]) => objs.map((o) => o.id);
        const sorted = ids([...expected].sort(comparator(f.sort)));

        const cursor = await walk(server, `${base}&sort=${f.sort}&limit=100`, (b) => (b.pagination.has_more ? href(b, 'next') : undefined));
        assert.deepEqual(ids(cursor), sorted, `${f.path} cursor`);
        const token = await walk(server, `${base}&sort=${f.sort}&page_size=100`, (b) => (b.next_page_token ? href(b, 'next') : undefined));
        assert.deepEqual(ids(token), sorted, `${f.path} token`);
        const offset = await walk(server, `${base}&sort=${f.sort}&offset=0&limit=100`, (b) => {
          assert.equal(b.pagination.total, expected.length);
          return href(b, 'next');
        });
        assert.deepEqual(ids(offset), sorted, `${f.path} offset`);
        const paged = await walk(server, `${base}&sort=${f.sort}&page=1&per_page=100`, (b) => {
          assert.equal(b.pagination.total, expected.length);
          return href(b, 'next');
        });
        assert.deepEqual(ids(paged), sorted, `${f.path} page`);
        for (const dir of ['id', '-id']) {
          const keyset = await walk(
            server,
            `${base}&sort=${dir}&limit=100&after_id=${dir === 'id' ? '00000000-0000-0000-0000-000000000000' : 'ffffffff-ffff-ffff-ffff-ffffffffffff'}`,
            (b) => (b.pagination.has_more ? href(b, 'next') : undefined),
          );
          assert.deepEqual(ids(keyset), ids([...expected].sort(comparator(dir))), `${f.path} keyset ${dir}`);
        }

        // Rows inserted between pages never make a cursor, token or keyset walk skip or repeat a row.
        let extra = ROWS;
        const insert = async (): Promise<void> => {
          await f.make(extra++);
        };
        for (const first of [`${base}&sort=${f.sort}&limit=70`, `${base}&sort=${f.sort}&page_size=70`, `${base}&limit=70&after_id=00000000-0000-0000-0000-000000000000`]) {
          const got = await walk(server, first, (b) => (b.pagination?.has_more || b.next_page_token ? href(b, 'next') : undefined), insert);
          const gotIds = ids(got);
          assert.equal(new Set(gotIds).size, gotIds.length, `${first}: a row came twice`);
          const order = first.includes('after_id') ? 'id' : f.sort;
          const original = ids([...expected].sort(comparator(order)));
          assert.deepEqual(
            gotIds.filter((id) => original.includes(id)),
            original,
            `${first}: an original row is missing or out of order`,
          );
        }
      });
    }
  });
}

/**
 * Half `a` or `b` of the fixtures, in-process on `store`; half b walks products (fixture 0) over a real socket too:
 * the rest of the HTTP surface is covered by test/e2e in every mode. Four files run the suite (each store, each
 * half): with 1,000 rows a fixture, one file per store took a minute alone and passed the runner's time limit (which
 * holds for a file as for a test) on a loaded machine; apart, they also run at once (CANON_TEST_CONCURRENCY).
 */
export function walkSuites(store: 'sqlite' | 'postgres', half: 'a' | 'b'): void {
  const [inject, listen]: Mode[] = store === 'sqlite' ? ['inject', 'listen'] : ['inject/postgres', 'listen/postgres'];
  // Users (fixture 1: a password hash a row) cost the most: its half takes the three cheapest with it.
  suite(inject!, half === 'a' ? [1, 2, 6, 7] : [0, 3, 4, 5]);
  if (half === 'b') suite(listen!, [0]);
}
