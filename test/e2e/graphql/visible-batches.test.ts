// getManyVisible and listGroups (src/services/visible-batches.ts): one statement for N ids or N parents, with the answers a GET by id and a nested list give each caller.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../../src/errors/app-error.js';
import type { Principal } from '../../../src/model/principal.js';
import { VisibleBatches } from '../../../src/services/visible-batches.js';
import { createCustomer, createProduct, MODES, startServer, type TestServer } from '../../support/harness.js';
import { countReads } from './support.js';

const principal = (userId: string | null, role: string, scopes: string[] = []): Principal => ({ kind: 'api_key', credentialId: `test-${userId ?? role}`, userId, role, scopes });

for (const mode of MODES.filter((m) => m.startsWith('listen'))) {
  describe(`batched reads under the caller's visibility (${mode})`, () => {
    let server: TestServer;
    let batches: VisibleBatches;
    let ann: { userId: string; key: string };
    let ben: { userId: string; key: string };
    const orders: Record<string, string> = {};
    const items: Record<string, string[]> = {};
    let reviewIds: string[];

    before(async () => {
      server = await startServer(mode, { worker: 'off' });
      batches = new VisibleBatches(server.runtime.store, server.runtime.model);
      ann = await createCustomer(server, 'batches-ann@example.com');
      ben = await createCustomer(server, 'batches-ben@example.com');
      const product = (await createProduct(server)).id as string;
      for (const [name, who] of [
        ['ann', ann],
        ['ben', ben],
      ] as const) {
        orders[name] = (await server.request('POST', '/v2/orders', { key: who.key, body: {} })).body.id;
        items[name] = [];
        for (let i = 0; i < 3; i++)
          items[name].push((await server.request('POST', `/v2/orders/${orders[name]}/order-items`, { key: who.key, body: { product_id: product, quantity: i + 1 } })).body.id);
      }
      reviewIds = [
        (await server.request('POST', '/v2/reviews', { key: ann.key, body: { item_id: product, rating: 5, title: 'Ann' } })).body.id,
        (await server.request('POST', '/v2/reviews', { key: ben.key, body: { item_id: product, rating: 2, title: 'Ben' } })).body.id,
      ];
    });
    after(async () => server.close());

    /** What a GET by id answers the principal: the object and its access, or null for a 404. */
    const getById = async (who: Principal, resource: string, id: string) => {
      try {
        return await server.runtime.services.get({ principal: who }, resource, id);
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
        throw err;
      }
    };

    it('answers each id as a GET by id does, in the order asked, in one statement', async () => {
      const ids = [...items.ben!, ...items.ann!, items.ann![0]!.toUpperCase(), 'not-a-uuid', '01900000-0000-7000-8000-000000000000'];
      for (const who of [principal(ann.userId, 'customer'), principal(ben.userId, 'customer'), principal(null, 'admin')]) {
        const reads = countReads(server.runtime.store);
        const got = await batches.getManyVisible(who, 'order-items', ids);
        const { count, calls } = reads.stop();
        assert.equal(count, 1, calls.join(', '));
        assert.equal(got.length, ids.length);
        // Ids are compared as REST takes them from a path: in either case, stored lowercase.
        for (let i = 0; i < ids.length; i++) assert.deepEqual(got[i], await getById(who, 'order-items', ids[i]!.toLowerCase()), `${who.role} ${who.userId} ${ids[i]}`);
      }
      const annSees = await batches.getManyVisible(principal(ann.userId, 'customer'), 'order-items', [...items.ben!, ...items.ann!]);
      assert.deepEqual(
        annSees.map((l) => l?.record.id ?? null),
        [null, null, null, ...items.ann!],
      );
    });

    it('gives the access a GET gives (the links an owner has on a public object), reading owners in one more statement at most', async () => {
      const who = principal(ann.userId, 'customer');
      const got = await batches.getManyVisible(who, 'reviews', reviewIds);
      for (let i = 0; i < reviewIds.length; i++) assert.deepEqual(got[i], await getById(who, 'reviews', reviewIds[i]!));
      assert.equal(got[0]!.access.update, true, 'Ann’s own review');
      assert.equal(got[1]!.access.update, false, 'Ben’s, visible but not hers to change');
    });

    it('refuses as a GET refuses whatever the objects: the scope, then the read grant', async () => {
      await assert.rejects(batches.getManyVisible(principal(ann.userId, 'customer', ['products:read']), 'orders', [orders.ann!]), (e: AppError) => e.code === 'INSUFFICIENT_SCOPE');
      await assert.rejects(batches.getManyVisible(principal(ann.userId, 'customer'), 'api-keys', [orders.ann!]), (e: AppError) => e.code === 'FORBIDDEN');
    });

    it('lists the first children of many parents in one statement, each as the nested list shows it to the caller', async () => {
      const request = { where: [], orderBy: [{ path: 'id', desc: false }], limit: 2 };
      for (const [who, key] of [
        [principal(ann.userId, 'customer'), ann.key],
        [principal(null, 'admin'), undefined],
      ] as const) {
        const reads = countReads(server.runtime.store);
        const groups = await batches.listGroups(who, 'order-items', 'order_id', [orders.ann!, orders.ben!], request);
        assert.equal(reads.stop().count, 1);
        for (const name of ['ann', 'ben'] as const) {
          const rest = await server.request('GET', `/v2/orders/${orders[name]}/order-items?limit=2`, key ? { key } : {});
          const group = groups.get(orders[name]!);
          if (rest.status === 404) {
            assert.equal(group, undefined, 'another’s order has no children for the caller');
            continue;
          }
          assert.deepEqual(
            group!.rows.map((l) => l.record.id),
            rest.body.data.map((i: { id: string }) => i.id),
          );
          assert.equal(group!.total, 3);
        }
      }
    });
  });
}
