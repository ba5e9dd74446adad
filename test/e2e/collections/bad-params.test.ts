// Every collection refuses bad parameters with 400 INVALID_QUERY and details; SQL text never reaches SQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';
import { fixtures, type CollectionFixture } from './fixtures.js';

const SQL = "1' OR '1'='1'; DROP TABLE products; --";

for (const mode of MODES.filter((m) => m.startsWith('inject')))
  describe(`collections refuse bad parameters (${mode})`, () => {
    let server: TestServer;
    let all: CollectionFixture[];
    before(async () => {
      server = await startServer(mode);
      all = await fixtures(server);
      for (const f of all) for (let i = 0; i < 3; i++) await f.make(i);
    });
    after(async () => server.close());

    const bad = async (path: string, query: string): Promise<void> => {
      const res = await server.request('GET', `${path}?${query}`);
      assert.equal(res.status, 400, `${path}?${query} → ${res.status} ${res.text}`);
      const e = errorShape(res);
      assert.equal(e.code, 'INVALID_QUERY');
      assert.ok(e.details && e.details.length > 0, `${path}?${query} has no details`);
    };

    it('the table of the issue, on every collection', async () => {
      for (const f of all) {
        const resource = server.runtime.model.resources.get(f.resource)!;
        const filterable = [...resource.paths.values()].find((p) => p.filterable && p.path !== 'id')!;
        for (const q of [
          'limit=101',
          'limit=0',
          'limit=-1',
          'limit=ten',
          'offset=-1',
          'page=0',
          'per_page=101',
          'page_size=0',
          'sort=password',
          'fields=password',
          'fields=password_hash',
          'nonexistent=1',
          `${encodeURIComponent(filterable.path)}[foo]=1`,
          'cursor=eyJ2IjoxfQ.AAAA',
          'page_token=forged',
          'after_id=12',
          'offset=0&cursor=x',
          'page=1&limit=5',
        ]) {
          await bad(f.path, q);
        }
      }
    });

    it('SQL text in every parameter, on every collection', async () => {
      for (const f of all) {
        const resource = server.runtime.model.resources.get(f.resource)!;
        const names = ['limit', 'offset', 'page', 'per_page', 'page_size', 'page_token', 'cursor', 'after_id', 'sort', 'fields', SQL];
        for (const p of resource.paths.values()) {
          if (!p.filterable) continue;
          names.push(p.path);
          for (const op of ['ne', 'gt', 'gte', 'lt', 'lte', 'in']) names.push(`${p.path}[${op}]`);
        }
        for (const name of names) await bad(f.path, `${encodeURIComponent(name)}=${encodeURIComponent(SQL)}`);
      }
    });

    it('q takes SQL text as plain words, and the tables are intact', async () => {
      const res = await server.request('GET', `/v2/products?q=${encodeURIComponent(SQL)}`);
      assert.equal(res.status, 200);
      const after = await server.request('GET', '/v2/products?limit=1');
      assert.equal(after.status, 200);
      assert.equal(after.body.data.length, 1);
      assert.equal((await server.request('GET', '/healthz')).status, 200);
    });
  });
