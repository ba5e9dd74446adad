// PostgreSQL records kept by id (PgStore.get, cachedRecord; issue 31.3): answered from memory only for a request an epoch read sent after its arrival vouches for, and never once anything committed — ours or another connection's.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import type { StoredRecord } from '../../../src/store/types.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

describe('PostgreSQL records kept by id', { skip: PG_SKIP }, () => {
  let core: Core;
  let database: TestDatabase;
  let other: pg.Client;
  let id: string;

  /** The cluster's snapshot as another connection reads it: equal before and after means nothing committed anywhere. */
  const snapshot = async (): Promise<string> => String((await other.query('SELECT txid_current_snapshot()::text AS s')).rows[0].s);

  /**
   * Reads the record, then asks `fromMemory` (true: answered from memory) for a request that arrived after that read
   * and before the next epoch read. On a server other suites write to (CI), the snapshot may move between any two
   * steps: then nothing may be answered from memory, and a hit is required only when it held still throughout.
   */
  const requireHitWhenQuiet = async (t: TestContext, message: string, fromMemory: (read: StoredRecord | null, arrived: number) => boolean | Promise<boolean>): Promise<void> => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const start = await snapshot();
      await core.store.credentialEpoch();
      const read = await core.store.get('products', id);
      const arrived = performance.now();
      await core.store.credentialEpoch();
      const hit = await fromMemory(read, arrived);
      const still = (await snapshot()) === start;
      if (hit) return;
      assert.equal(still, false, message);
    }
    t.diagnostic('the cluster was never quiet for one attempt in 50: no hit required, none wrong');
  };

  before(async () => {
    database = await createTestDatabase();
    const config = resolveConfig({ databaseUrl: database.url, seed: false, secret: 'pg-record-cache', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
    core = await openCore(config, { appDef: commerce, logger: false });
    other = new pg.Client({ connectionString: database.url });
    await other.connect();
    const created = await core.services.create({ principal: SYSTEM }, 'products', { name: 'Kept', price: { amount: 100, currency: 'EUR' }, status: 'active' });
    id = created.record.id;
  });
  after(async () => {
    await other?.end();
    await core?.close();
    await database?.drop();
  });

  it('nothing without an arrival, or for a request no epoch read was sent after', async () => {
    const store = core.store;
    await store.credentialEpoch();
    await store.get('products', id);
    assert.equal(store.cachedRecord!('products', id), undefined, 'no arrival: never from memory');
    assert.equal(store.cachedRecord!('products', id, performance.now()), undefined, 'arrived after the last read: a read must be sent first');
  });

  it('a request whose epoch read shows the snapshot the record was kept under is answered from memory', async (t) => {
    await requireHitWhenQuiet(t, 'the snapshot held still, yet the record was not answered from memory', (read, arrived) => {
      const kept = core.store.cachedRecord!('products', id, arrived);
      if (kept === undefined) return false;
      assert.deepEqual(kept, read);
      assert.ok(Object.isFrozen(kept));
      return true;
    });
  });

  it('another connection’s commit, and ours, void the kept record for every request that arrives after it', async () => {
    const store = core.store;
    for (const [n, write] of [
      [1, () => other.query('UPDATE products SET name = $1 WHERE id = $2', ['Changed by another connection', id])],
      [2, () => core.services.update({ principal: SYSTEM }, 'products', id, 'patch', { name: 'Changed by us' })],
    ] as const) {
      await store.credentialEpoch();
      const old = await store.get('products', id);
      await write();
      const arrived = performance.now();
      await store.credentialEpoch();
      assert.equal(store.cachedRecord!('products', id, arrived), undefined, `write ${n}: the kept record is void`);
      const fresh = await store.get('products', id);
      assert.notEqual(fresh?.name, old?.name, `write ${n}: a read after it sees it`);
    }
  });

  it('services.get given the request’s arrival (the Fastify route’s) answers from the kept record, never a voided one', async (t) => {
    const store = core.store;
    const ctx = (since: number) => ({ principal: SYSTEM, since });
    await other.query('UPDATE products SET name = $1 WHERE id = $2', ['Read through the services', id]);
    const arrived = performance.now();
    await store.credentialEpoch();
    assert.equal((await core.services.get(ctx(arrived), 'products', id)).record.name, 'Read through the services', 'a commit before arrival is seen');
    // The same frozen object: answered from memory, not read again.
    await requireHitWhenQuiet(
      t,
      'the snapshot held still, yet services.get read the record again',
      async (read, arrived) => (await core.services.get(ctx(arrived), 'products', id)).record === read,
    );
  });

  it('readStamp given the request’s arrival answers with the read sent after it (no read of its own), else reads', async () => {
    const store = core.store;
    const arrived = performance.now();
    await store.credentialEpoch();
    const known = store.readStamp!(arrived);
    assert.equal(typeof known, 'string', 'the read authentication waited for stamps the request: no promise, no read');
    assert.match(String(known), /^\d+:\d+:/);
    // A request that arrived after the last read, or one that names no arrival, waits for a read sent now.
    const later = store.readStamp!(performance.now());
    assert.ok(later instanceof Promise);
    assert.ok(store.readStamp!() instanceof Promise);
    await Promise.all([later, store.readStamp!()]);
    // A commit after the request's read moves the stamp a later request is given.
    await other.query('UPDATE products SET name = $1 WHERE id = $2', [`Stamped ${Date.now()}`, id]);
    const after = performance.now();
    await store.credentialEpoch();
    assert.notEqual(store.readStamp!(after), known);
  });

  it('a shared page takes the stamp of an epoch read sent after the request arrived, never an earlier one', async () => {
    const store = core.store;
    const query = { where: [{ path: 'id', op: 'eq' as const, value: id }], orderBy: [{ path: 'id', desc: false }], limit: 5, shared: true };
    for (const [n, write] of [
      [1, () => other.query('UPDATE products SET name = $1 WHERE id = $2', [`Listed ${Date.now()}`, id])],
      [2, () => core.services.update({ principal: SYSTEM }, 'products', id, 'patch', { name: `Listed by us ${Date.now()}` })],
    ] as const) {
      await store.credentialEpoch();
      const arrived = performance.now();
      // Read twice: the second read of a page under one stamp keeps it (src/store/list-cache.ts).
      await store.list('products', { ...query, since: arrived });
      const before = await store.list('products', { ...query, since: arrived });
      await write();
      // No epoch read was sent after this request arrived: the last one must not vouch for it.
      const after = await store.list('products', { ...query, since: performance.now() });
      assert.notEqual(after.rows[0]?.name, before.rows[0]?.name, `write ${n}: the page read after it shows it`);
      const known = performance.now();
      await store.credentialEpoch();
      const again = await store.list('products', { ...query, since: known });
      assert.equal(again.rows[0]?.name, after.rows[0]?.name, `write ${n}: and so does one stamped by authentication's read`);
    }
  });
});
