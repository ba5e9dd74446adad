// PostgreSQL records kept by id (PgStore.get, cachedRecord; issue 31.3): answered from memory only for a request an epoch read sent after its arrival vouches for; never once another connection committed, nor for a row our own commit wrote, while our commits leave the other rows kept (issue 31.2).
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM } from '../../../src/model/principal.js';
import { DispatchPositions, dispatching } from '../../../src/webhooks/dispatch-positions.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import type { StoredRecord } from '../../../src/store/types.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

describe('PostgreSQL records kept by id', { skip: PG_SKIP }, () => {
  let core: Core;
  let database: TestDatabase;
  let other: pg.Client;
  let id: string;
  /** A second product, which the tests of our own writes change while `id` stays kept. */
  let written: string;

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
    written = (await core.services.create({ principal: SYSTEM }, 'products', { name: 'Written', price: { amount: 5, currency: 'EUR' }, status: 'draft' })).record.id;
  });

  /**
   * The store's reads by id (PgOps.get on the pool), for a test to hold one after PostgreSQL answered (replacing `get`),
   * and the original `read`, put back when the test ends.
   */
  const readsById = (
    t: TestContext,
  ): { reads: { get(resource: string, id: string): Promise<StoredRecord | null> }; read: (resource: string, id: string) => Promise<StoredRecord | null> } => {
    const reads = (core.store as unknown as { reads: { get(resource: string, id: string): Promise<StoredRecord | null> } }).reads;
    const read = reads.get.bind(reads);
    t.after(() => {
      reads.get = read;
    });
    return { reads, read };
  };

  /** How many transactions ended between two snapshots (src/store/postgres/own-transactions.ts has the same reading). */
  const endedBetween = (a: string, b: string): number => {
    const [amin, amax, axip] = a.split(':') as [string, string, string];
    const [, bmax, bxip] = b.split(':') as [string, string, string];
    const running = new Set(bxip ? bxip.split(',').map(Number) : []);
    let n = 0;
    for (const x of axip ? axip.split(',').map(Number) : []) if (x >= Number(amin) && !running.has(x)) n++;
    for (let x = Number(amax); x < Number(bmax); x++) if (!running.has(x)) n++;
    return n;
  };
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

  it('our own commit of another row, and the events it stamps, leave the kept record answered from memory; the row written is read anew', async (t) => {
    const store = core.store;
    for (let attempt = 0; attempt < 50; attempt++) {
      const start = await snapshot();
      await store.credentialEpoch();
      const read = await store.get('products', id);
      await store.get('products', written);
      const updated = await core.services.update({ principal: SYSTEM }, 'products', written, 'patch', { name: `Written ${attempt}` });
      await store.sequenceEvents();
      const arrived = performance.now();
      await store.credentialEpoch();
      const kept = store.cachedRecord!('products', id, arrived);
      assert.equal(store.cachedRecord!('products', written, arrived), undefined, 'the row we wrote is never answered from memory');
      assert.equal((await store.get('products', written))?.name, updated.record.name);
      // Ours: the update and the stamping of its event. Anything more ended meanwhile is another connection's.
      const quiet = endedBetween(start, await snapshot()) <= 2;
      if (kept !== undefined) {
        assert.equal(kept, read, 'the same frozen record');
        return;
      }
      assert.equal(quiet, false, 'only our own transactions ended, yet the kept record was dropped');
    }
    t.diagnostic('the cluster was never quiet for one attempt in 50: no hit required, none wrong');
  });

  it('our own transaction that only locks a row (the webhook dispatcher’s tick) leaves the kept record answered from memory', async (t) => {
    const store = core.store;
    for (const [name, tick] of [
      ['a row lock alone', () => store.transaction(async (tx) => void (await tx.lock('products', written, 'update')))],
      ['the dispatcher’s frontier lock', () => dispatching(store, async (tx) => void (await DispatchPositions.open(tx, new Date().toISOString())))],
    ] as const) {
      // The frontier row exists from the first dispatch on: the ticks measured lock it and write nothing.
      await tick();
      let hit = false;
      for (let attempt = 0; attempt < 50 && !hit; attempt++) {
        const start = await snapshot();
        await store.credentialEpoch();
        const read = await store.get('products', id);
        await tick();
        const arrived = performance.now();
        await store.credentialEpoch();
        const kept = store.cachedRecord!('products', id, arrived);
        // The tick takes a transaction id (a locked row carries its locker's): one ended is ours; more, another's.
        const quiet = endedBetween(start, await snapshot()) <= 1;
        if (kept !== undefined) {
          assert.equal(kept, read, `${name}: the same frozen record`);
          hit = true;
        } else assert.equal(quiet, false, `${name}: only our own lock ended, yet the kept record was dropped`);
      }
      if (!hit) t.diagnostic(`${name}: the cluster was never quiet for one attempt in 50: no hit required, none wrong`);
    }
  });

  it('a record whose read answered after a later epoch read is kept when that read shows the same snapshot (under load, one is always in flight)', async (t) => {
    const store = core.store;
    const { reads, read } = readsById(t);
    for (let attempt = 0; attempt < 50; attempt++) {
      const start = await snapshot();
      await store.credentialEpoch();
      let letGo!: () => void;
      const hold = new Promise<void>((resolve) => (letGo = resolve));
      reads.get = async (resource, id) => {
        const record = await read(resource, id);
        await hold;
        return record;
      };
      const pending = store.get('products', id);
      reads.get = read;
      // Another epoch read answers while the record's read is held: a new read, the same snapshot if nothing committed.
      await store.credentialEpoch();
      letGo();
      const record = await pending;
      const arrived = performance.now();
      await store.credentialEpoch();
      const kept = store.cachedRecord!('products', id, arrived);
      const quiet = (await snapshot()) === start;
      if (kept !== undefined) {
        assert.equal(kept, record);
        return;
      }
      assert.equal(quiet, false, 'nothing committed, yet the record read across an epoch read was not kept');
    }
    t.diagnostic('the cluster was never quiet for one attempt in 50: no hit required, none wrong');
  });

  it('another connection’s commit to another row voids every kept record', async () => {
    const store = core.store;
    await store.credentialEpoch();
    await store.get('products', id);
    await other.query('UPDATE products SET name = $1 WHERE id = $2', [`By hand ${Date.now()}`, written]);
    const arrived = performance.now();
    await store.credentialEpoch();
    assert.equal(store.cachedRecord!('products', id, arrived), undefined);
  });

  it('a read of a row sent while our transaction writes it, answered once that has committed, is not kept', async (t) => {
    const store = core.store;
    const { reads, read } = readsById(t);
    for (let attempt = 0; attempt < 50; attempt++) {
      let answered!: () => void;
      const answer = new Promise<void>((resolve) => (answered = resolve));
      let letGo!: () => void;
      const hold = new Promise<void>((resolve) => (letGo = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let writing!: () => void;
      const begun = new Promise<void>((resolve) => (writing = resolve));
      const start = await snapshot();
      await store.credentialEpoch();
      const tx = store.transaction(async (tx) => {
        const row = (await tx.lock('products', written, 'update'))!;
        await tx.update('products', { ...row, name: `Held ${attempt} ${Date.now()}`, version: row.version + 1 });
        writing();
        await held;
      });
      await begun;
      reads.get = async (resource, id) => {
        const record = await read(resource, id);
        answered();
        await hold;
        return record;
      };
      // Sent while the transaction is open: PostgreSQL answers with the row before the change.
      const before = store.get('products', written);
      await answer;
      reads.get = read;
      release();
      await tx;
      // Only now does the store take the answer in, after our commit forgot the row.
      letGo();
      const old = await before;
      const arrived = performance.now();
      await store.credentialEpoch();
      const kept = store.cachedRecord!('products', written, arrived);
      assert.equal(kept, undefined, 'the row as it was before our commit must not be answered from memory');
      assert.notEqual((await store.get('products', written))?.name, old?.name);
      // Ours alone ended (the update; it stamped no events, written through the store): the check above counted.
      if (endedBetween(start, await snapshot()) <= 1) return;
    }
    t.diagnostic('the cluster was never quiet for one attempt in 50: the check ran, but the caches may have emptied for another reason');
  });
});
