// The store contract suite: every adapter (SQLite now, PostgreSQL later) must pass exactly these tests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileModel, type CompiledModel } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { UniqueViolation, type Store, type StoredRecord, type Tx } from '../../../src/store/types.js';

const owners = defineResource({
  name: 'owners',
  singular: 'owner',
  fields: { email: f.email({ required: true, unique: true, filterable: true }), name: f.string({ sortable: true }), role: f.enum(['admin', 'member']) },
  ownership: { field: 'id' },
  permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
});

const things = defineResource({
  name: 'contract-things',
  singular: 'contract_thing',
  fields: {
    owner_id: f.uuid({ filterable: true, references: 'owners' }),
    label: f.string({ filterable: true, sortable: true }),
    count: f.integer({ filterable: true, sortable: true }),
    active: f.boolean({ filterable: true }),
    kind: f.enum(['a', 'b', 'c'], { filterable: true }),
    at: f.timestamp({ filterable: true, sortable: true }),
    price: f.money({ filterable: true, sortable: true }),
    tags: f.strings(),
    title: f.string({ searchable: true }),
    body: f.string({ searchable: true }),
  },
  permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
});

/** Every field type and no searchable field: the shape adapters write in batches (insertMany, updateMany). */
const batched = defineResource({
  name: 'contract-batched',
  singular: 'contract_batched',
  fields: {
    ref: f.uuid({ filterable: true }),
    label: f.string({ filterable: true, unique: true }),
    count: f.integer({ sortable: true }),
    active: f.boolean(),
    kind: f.enum(['a', 'b']),
    at: f.timestamp({ sortable: true }),
    price: f.money(),
    tags: f.strings(),
    doc: f.object(),
  },
  permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
});

export const contractApp = defineApp({ resources: [owners, things, batched], users: 'owners' });

let seq = 0;
/** Ids sort in creation order, as UUIDv7 ids do. */
function id(): string {
  seq++;
  return `00000000-0000-7000-8000-${seq.toString(16).padStart(12, '0')}`;
}

function thing(overrides: Partial<StoredRecord> = {}): StoredRecord {
  const now = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  return {
    id: id(),
    version: 1,
    created_at: now,
    updated_at: now,
    owner_id: null,
    label: 'x',
    count: 0,
    active: true,
    kind: 'a',
    at: now,
    price: { amount: 100, currency: 'EUR' },
    tags: ['t'],
    title: null,
    body: null,
    ...overrides,
  };
}

/**
 * `sibling`, where the adapter can have one: a second store on the database the last `open()` made, as
 * another process would have (a file store, PostgreSQL; not an in-memory database).
 */
/** Orders over contract-things' nullable fields with ties, each ending with id (a total order): the offset tests read pages in each. */
const ORDERS_WITH_NULLS_AND_TIES = [
  [{ path: 'id', desc: false }],
  [
    { path: 'label', desc: false },
    { path: 'id', desc: false },
  ],
  [
    { path: 'label', desc: true },
    { path: 'id', desc: false },
  ],
  [
    { path: 'count', desc: true },
    { path: 'at', desc: false },
    { path: 'id', desc: false },
  ],
  [
    { path: 'price.amount', desc: false },
    { path: 'id', desc: true },
  ],
];

export function storeContract(name: string, open: () => Promise<Store>, sibling?: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    let model: CompiledModel;
    before(async () => {
      store = await open();
      model = compileModel(contractApp);
      await store.migrate(model);
    });
    after(async () => store.close());

    it('migrate is idempotent', async () => {
      await store.migrate(model);
      assert.equal(await store.ping(), true);
    });

    it('round-trips every field type, nulls included', async () => {
      const a = thing({ label: 'round', count: -5, active: false, kind: 'b', tags: ['x', 'y'], price: { amount: 12345, currency: 'USD' } });
      const b = thing({ label: null, count: null, active: null, kind: null, at: null, price: null, tags: null });
      await store.transaction(async (tx) => {
        await tx.insert('contract-things', a);
        await tx.insert('contract-things', b);
      });
      assert.deepEqual(await store.get('contract-things', a.id), a);
      assert.deepEqual(await store.get('contract-things', b.id), b);
      assert.equal(await store.get('contract-things', id()), null);
    });

    it('updates and deletes whole records', async () => {
      const a = thing();
      await store.transaction((tx) => tx.insert('contract-things', a));
      const changed = { ...a, version: 2, label: 'changed', tags: [] };
      await store.transaction((tx) => tx.update('contract-things', changed));
      assert.deepEqual(await store.get('contract-things', a.id), changed);
      assert.equal(await store.transaction((tx) => tx.delete('contract-things', a.id)), true);
      assert.equal(await store.transaction((tx) => tx.delete('contract-things', a.id)), false);
      assert.equal(await store.get('contract-things', a.id), null);
    });

    it('get returns a deep-frozen record; inside a transaction the record is the caller’s own', async () => {
      const a = thing({ label: 'frozen' });
      await store.transaction((tx) => tx.insert('contract-things', a));
      const read = (await store.get('contract-things', a.id))!;
      assert.ok(Object.isFrozen(read));
      assert.ok(Object.isFrozen(read.price) && Object.isFrozen(read.tags));
      await store.transaction(async (tx) => {
        const own = (await tx.get('contract-things', a.id))!;
        own.label = 'changed in memory only';
        assert.equal(own.label, 'changed in memory only');
      });
      assert.equal((await store.get('contract-things', a.id))!.label, 'frozen');
    });

    it('reads many by id: those that exist, in the order asked, each once, malformed ids finding nothing', async () => {
      const [a, b, c] = [thing({ label: 'many-a' }), thing({ label: 'many-b' }), thing({ label: 'many-c' })];
      await store.transaction(async (tx) => {
        for (const r of [a, b, c]) await tx.insert('contract-things', r);
      });
      const got = await store.getMany('contract-things', [c.id, id(), a.id, 'not-a-uuid', c.id.toUpperCase(), b.id]);
      assert.deepEqual(
        got.map((r) => r.label),
        ['many-c', 'many-a', 'many-b'],
      );
      assert.deepEqual(got[1], a);
      assert.deepEqual(await store.getMany('contract-things', []), []);
      await store.transaction(async (tx) =>
        assert.deepEqual(
          (await tx.getMany('contract-things', [b.id])).map((r) => r.id),
          [b.id],
        ),
      );
    });

    it('sums exact integer products over matching rows, and 0 over none', async () => {
      const label = `sum-${seq}`;
      const big = 999_999_999_999_999;
      await store.transaction(async (tx) => {
        await tx.insert('contract-things', thing({ label, count: 3, price: { amount: 1999, currency: 'EUR' } }));
        await tx.insert('contract-things', thing({ label, count: 1, price: { amount: big - 5997, currency: 'EUR' } }));
        await tx.insert('contract-things', thing({ label: `${label}-other`, count: 999, price: { amount: big, currency: 'EUR' } }));
      });
      await store.transaction(async (tx) => {
        assert.equal(await tx.sum('contract-things', [{ path: 'label', op: 'eq', value: label }], ['count', 'price.amount']), big);
        assert.equal(await tx.sum('contract-things', [{ path: 'label', op: 'eq', value: label }], ['count']), 4);
        assert.equal(await tx.sum('contract-things', [{ path: 'label', op: 'eq', value: 'nothing' }], ['count', 'price.amount']), 0);
        // 999 × (10^15 − 1) is past 2^53 but within 64 bits: no overflow, no error, only precision.
        assert.ok((await tx.sum('contract-things', [{ path: 'label', op: 'eq', value: `${label}-other` }], ['count', 'price.amount'])) > big);
      });
    });

    it('lock reads a record in every mode, null for an unknown or malformed id', async () => {
      const a = thing({ label: 'lockable' });
      await store.transaction((tx) => tx.insert('contract-things', a));
      await store.transaction(async (tx) => {
        for (const mode of ['update', 'delete', 'reference'] as const) assert.deepEqual(await tx.lock('contract-things', a.id, mode), a);
        assert.equal(await tx.lock('contract-things', id(), 'update'), null);
        assert.equal(await tx.lock('contract-things', 'not-a-uuid', 'reference'), null);
      });
    });

    it('a transaction waiting for a locked row reads it as the holder committed it (no lost update)', async () => {
      const a = thing({ count: 0 });
      await store.transaction((tx) => tx.insert('contract-things', a));
      // Twenty read-modify-write increments at once: each locks the row first, so none overwrites another.
      await Promise.all(
        Array.from({ length: 20 }, () =>
          store.transaction(async (tx) => {
            const current = (await tx.lock('contract-things', a.id, 'update'))!;
            await new Promise((resolve) => setImmediate(resolve));
            await tx.update('contract-things', { ...current, count: (current.count as number) + 1, version: (current.version as number) + 1 });
          }),
        ),
      );
      assert.equal((await store.get('contract-things', a.id))!.count, 20);
    });

    describe('batched writes', () => {
      const row = (n: number, overrides: Partial<StoredRecord> = {}): StoredRecord => {
        const now = new Date(Date.UTC(2026, 1, 1, 0, 0, n % 60, n % 1000)).toISOString();
        return {
          id: id(),
          version: 1,
          created_at: now,
          updated_at: now,
          ref: id(),
          label: `batched-${seq}-${n}`,
          count: n,
          active: n % 2 === 0,
          kind: n % 2 === 0 ? 'a' : 'b',
          at: now,
          price: { amount: n * 100, currency: 'EUR' },
          tags: [`t${n}`],
          doc: { n, nested: { quote: "it's", list: [1, null] } },
          ...overrides,
        };
      };
      const empty = { ref: null, count: null, active: null, kind: null, at: null, price: null, tags: null, doc: null };

      it('insertMany writes every record as insert would, nulls included; an empty batch writes nothing', async () => {
        const records = [row(1), row(2, empty), row(3)];
        await store.transaction(async (tx) => {
          await tx.insertMany('contract-batched', []);
          await tx.insertMany('contract-batched', records);
        });
        for (const r of records) assert.deepEqual(await store.get('contract-batched', r.id), r);
      });

      it('updateMany writes each whole record, every column type, and touches no other row', async () => {
        const records = [row(4), row(5), row(6)];
        await store.transaction((tx) => tx.insertMany('contract-batched', records));
        const changed = [
          { ...records[0]!, ...empty, version: 2 },
          {
            ...records[1]!,
            version: 2,
            updated_at: '2026-03-01T00:00:00.000Z',
            count: -7,
            active: true,
            kind: 'a',
            price: { amount: 1, currency: 'USD' },
            tags: [],
            doc: { x: 'y' },
          },
        ];
        await store.transaction((tx) => tx.updateMany('contract-batched', changed));
        assert.deepEqual(await store.get('contract-batched', records[0]!.id), changed[0]);
        assert.deepEqual(await store.get('contract-batched', records[1]!.id), changed[1]);
        assert.deepEqual(await store.get('contract-batched', records[2]!.id), records[2]);
      });

      it('a batch larger than one statement can carry is written whole', async () => {
        const records = Array.from({ length: 6_000 }, (_, i) => row(i, { doc: null, tags: null }));
        await store.transaction((tx) => tx.insertMany('contract-batched', records));
        const moved = records.map((r) => ({ ...r, version: 2, count: -(r.count as number) - 1 }));
        await store.transaction((tx) => tx.updateMany('contract-batched', moved));
        const back = await store.getMany('contract-batched', [records[0]!.id, records[5_999]!.id]);
        assert.deepEqual(back, [moved[0], moved[5_999]]);
        assert.equal(
          (
            await store.list('contract-batched', {
              where: [{ path: 'ref', op: 'in', value: records.slice(0, 3).map((r) => r.ref as string) }],
              orderBy: [{ path: 'id', desc: false }],
              limit: 10,
            })
          ).rows.length,
          3,
        );
      });

      it('a unique violation anywhere in a batch is UniqueViolation naming the field, and none of the batch stays', async () => {
        const first = row(7);
        await store.transaction((tx) => tx.insertMany('contract-batched', [first]));
        const batch = [row(8), row(9, { label: first.label })];
        await assert.rejects(
          store.transaction((tx) => tx.insertMany('contract-batched', batch)),
          (err: unknown) => err instanceof UniqueViolation && err.field === 'label' && err.resource === 'contract-batched',
        );
        assert.equal(await store.get('contract-batched', batch[0]!.id), null);
      });
    });

    it('raises UniqueViolation naming the field', async () => {
      const now = new Date().toISOString();
      const o = { id: id(), version: 1, created_at: now, updated_at: now, email: 'dup@example.com', name: 'A' };
      await store.transaction((tx) => tx.insert('owners', o));
      await assert.rejects(
        store.transaction((tx) => tx.insert('owners', { ...o, id: id() })),
        (err: unknown) => err instanceof UniqueViolation && err.field === 'email' && err.resource === 'owners',
      );
    });

    it('a claiming list passes over rows another transaction holds, so two workers take disjoint rows', async () => {
      const label = `queue-${id()}`;
      const rows = [1, 2, 3, 4].map((n) => thing({ label, count: n }));
      await store.transaction(async (tx) => {
        for (const r of rows) await tx.insert('contract-things', r);
      });
      const claim = (tx: Tx): Promise<string[]> =>
        tx
          .list('contract-things', {
            where: [{ path: 'label', op: 'eq', value: label }],
            orderBy: [
              { path: 'count', desc: false },
              { path: 'id', desc: false },
            ],
            limit: 2,
            skipLocked: true,
          })
          .then((r) => r.rows.map((x) => x.id));
      let releaseFirst!: () => void;
      const held = new Promise<void>((resolve) => (releaseFirst = resolve));
      let firstClaimed!: (ids: string[]) => void;
      const first = new Promise<string[]>((resolve) => (firstClaimed = resolve));
      const one = store.transaction(async (tx) => {
        firstClaimed(await claim(tx));
        await held;
      });
      const a = await first;
      // SQLite has one writer: the second transaction starts once the first ends and may take the same rows then.
      const second = store.transaction(claim);
      const b = await Promise.race([second, new Promise<string[]>((resolve) => setTimeout(() => resolve([]), 1_000))]);
      releaseFirst();
      await one;
      const taken = b.length ? b : await second;
      assert.deepEqual(a, [rows[0]!.id, rows[1]!.id]);
      if (b.length) assert.deepEqual(taken, [rows[2]!.id, rows[3]!.id], 'the second claim skipped the held rows');
      else assert.equal(taken.length, 2);
    });

    it('rolls back everything, events included, when the transaction throws', async () => {
      const a = thing();
      const before = (await store.listEvents(0, 1000)).length;
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.insert('contract-things', a);
          await tx.appendEvent({ id: id(), type: 't.created', resource: 'contract-things', object_id: a.id, owner_id: null, api_version: 'x', created_at: a.created_at, data: {} });
          assert.deepEqual(await tx.get('contract-things', a.id), a, 'a transaction reads its own writes');
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal(await store.get('contract-things', a.id), null);
      assert.equal((await store.listEvents(0, 1000)).length, before);
    });

    const event = (type: string, owner: string | null = null, resource = 'contract-things') => ({
      id: id(),
      type,
      resource,
      object_id: id(),
      owner_id: owner,
      api_version: '2026-03-01',
      created_at: new Date().toISOString(),
      data: { object: {} },
    });

    it('sequences follow commit order: an event committed later never gets a number below one already readable', async () => {
      const early = event('order.created');
      const late = event('order.created');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let appended!: () => void;
      const inserted = new Promise<void>((resolve) => (appended = resolve));
      // The first transaction appends first but commits last.
      const first = store.transaction(async (tx) => {
        await tx.appendEvent(early);
        appended();
        await held;
      });
      await inserted;
      const second = store.transaction((tx) => tx.appendEvent(late));
      // SQLite: one writer, so the second waits for the first; PostgreSQL: it commits first.
      const secondFirst = await Promise.race([second.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 500))]);
      if (secondFirst) {
        await store.sequenceEvents();
        const readable = (await store.listEvents(0, 100_000)).filter((e) => e.id === early.id || e.id === late.id);
        assert.deepEqual(
          readable.map((e) => e.id),
          [late.id],
          'the uncommitted event has no number yet',
        );
      }
      release();
      await first;
      await second;
      await store.sequenceEvents();
      const both = (await store.listEvents(0, 100_000)).filter((e) => e.id === early.id || e.id === late.id);
      assert.equal(both.length, 2);
      assert.ok(both[0]!.sequence < both[1]!.sequence);
      if (secondFirst)
        assert.deepEqual(
          both.map((e) => e.id),
          [late.id, early.id],
          'numbered in commit order',
        );
      assert.equal(await store.lastEventSequence(), Math.max(...(await store.listEvents(0, 100_000)).map((e) => e.sequence)));
    });

    it('finds an event by id, filters by owner, resource and type pattern, and purges by age', async () => {
      const owner = id();
      const a = event('order_item.created', owner);
      const b = event('order.paid', owner, 'orders');
      const c = event('orderXitem.created', null);
      const old = { ...event('order.created'), created_at: '2020-01-01T00:00:00.000Z' };
      await store.transaction(async (tx) => {
        for (const e of [a, b, c, old]) await tx.appendEvent(e);
      });
      await store.sequenceEvents();
      const found = await store.findEvent(a.id);
      assert.equal(found?.type, 'order_item.created');
      assert.equal(await store.findEvent(id()), null);
      assert.equal(await store.findEvent('not-a-uuid'), null);
      const from = found!.sequence - 1;
      const ids = async (filter: Parameters<Store['listEvents']>[2]) => (await store.listEvents(from, 100, filter)).map((e) => e.id);
      assert.deepEqual(await ids({ ownerId: owner }), [a.id, b.id]);
      assert.deepEqual(await ids({ types: ['order_item.*'] }), [a.id], '_ is literal');
      assert.deepEqual(await ids({ types: ['*.paid', 'orderX*'] }), [b.id, c.id]);
      assert.deepEqual(await ids({ resources: ['orders'] }), [b.id]);
      assert.deepEqual(await ids({ resources: [] }), []);
      const head = await store.lastEventSequence();
      assert.ok((await store.purgeEvents('2021-01-01T00:00:00.000Z', 1000)) >= 1);
      assert.equal(await store.findEvent(old.id), null);
      assert.ok(await store.findEvent(a.id));
      assert.equal(await store.lastEventSequence(), head, 'the head survives the purge');
    });

    it('purges only at or below a sequence when given one (events still owed to webhook endpoints stay)', async () => {
      const older = { ...event('order.created'), created_at: '2020-01-01T00:00:00.000Z' };
      const newer = { ...event('order.updated'), created_at: '2020-01-02T00:00:00.000Z' };
      await store.transaction(async (tx) => {
        await tx.appendEvent(older);
        await tx.appendEvent(newer);
      });
      await store.sequenceEvents();
      const first = (await store.findEvent(older.id))!.sequence;
      assert.equal(await store.purgeEvents('2021-01-01T00:00:00.000Z', 1000, first - 1), 0, 'nothing at or below the bound is old');
      assert.equal(await store.purgeEvents('2021-01-01T00:00:00.000Z', 1000, first), 1);
      assert.equal(await store.findEvent(older.id), null);
      assert.ok(await store.findEvent(newer.id), 'above the bound: kept, however old');
      assert.ok((await store.purgeEvents('2021-01-01T00:00:00.000Z', 1000)) >= 1);
      assert.equal(await store.findEvent(newer.id), null);
    });

    it('appends events with increasing sequences and lists them in order', async () => {
      const ids = [id(), id(), id()];
      await store.transaction(async (tx) => {
        for (const e of ids) {
          await tx.appendEvent({
            id: e,
            type: 'thing.updated',
            resource: 'contract-things',
            object_id: e,
            owner_id: ids[0]!,
            api_version: '2026-03-01',
            created_at: new Date().toISOString(),
            data: { object: { id: e } },
            previous_attributes: { label: 'old' },
          });
        }
      });
      await store.sequenceEvents();
      const all = await store.listEvents(0, 10_000);
      const mine = all.filter((e) => ids.includes(e.id));
      assert.deepEqual(
        mine.map((e) => e.id),
        ids,
      );
      assert.ok(mine[0]!.sequence < mine[1]!.sequence && mine[1]!.sequence < mine[2]!.sequence);
      assert.deepEqual(mine[0]!.previous_attributes, { label: 'old' });
      const after = await store.listEvents(mine[0]!.sequence, 2);
      assert.equal(after[0]!.id, ids[1]);
    });

    describe('queries', () => {
      const rows: StoredRecord[] = [];
      let ownerId: string;
      before(async () => {
        const now = new Date().toISOString();
        ownerId = id();
        await store.transaction(async (tx) => {
          await tx.insert('owners', { id: ownerId, version: 1, created_at: now, updated_at: now, email: 'owner@example.com', name: 'Owner' });
          for (let i = 0; i < 30; i++) {
            const r = thing({
              label: `q${i % 3}`,
              count: i % 7,
              kind: (['a', 'b', 'c'] as const)[i % 3],
              active: i % 2 === 0,
              owner_id: i < 10 ? ownerId : null,
              price: { amount: (i % 5) * 100, currency: 'EUR' },
            });
            rows.push(r);
            await tx.insert('contract-things', r);
          }
        });
      });
      const mine = (extra = {}) => ({ where: [{ path: 'label', op: 'in' as const, value: ['q0', 'q1', 'q2'] }], orderBy: [{ path: 'id', desc: false }], limit: 100, ...extra });

      it('lists the first rows of many groups in one call: each group in its own order, with its size', async () => {
        const other = id();
        const groups = await store.listGroups('contract-things', {
          field: 'kind',
          values: ['a', 'c', 'missing'],
          where: [{ path: 'label', op: 'in', value: ['q0', 'q1', 'q2'] }],
          orderBy: [
            { path: 'count', desc: true },
            { path: 'id', desc: true },
          ],
          limit: 3,
        });
        assert.deepEqual([...groups.keys()].sort(), ['a', 'c'], 'a group without rows is absent');
        for (const kind of ['a', 'c']) {
          const all = rows.filter((r) => r.kind === kind).sort((x, y) => (y.count as number) - (x.count as number) || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0));
          assert.equal(groups.get(kind)!.total, all.length);
          assert.deepEqual(groups.get(kind)!.rows, all.slice(0, 3), kind);
        }
        // Further conditions narrow each group and its size; groups by a foreign key, as loaders ask.
        const owned = await store.listGroups('contract-things', {
          field: 'owner_id',
          values: [ownerId, other],
          where: [{ path: 'active', op: 'eq', value: true }],
          orderBy: [{ path: 'id', desc: false }],
          limit: 100,
        });
        const expected = rows.filter((r) => r.owner_id === ownerId && r.active === true);
        assert.deepEqual([...owned.keys()], [ownerId]);
        assert.deepEqual(owned.get(ownerId), { rows: expected, total: expected.length });
        assert.equal((await store.listGroups('contract-things', { field: 'kind', values: [], where: [], orderBy: [{ path: 'id', desc: false }], limit: 5 })).size, 0);
        await store.transaction(async (tx) =>
          assert.equal(
            (await tx.listGroups('contract-things', { field: 'kind', values: ['b'], where: [], orderBy: [{ path: 'id', desc: false }], limit: 1 })).get('b')!.rows.length,
            1,
          ),
        );
      });

      it('filters with every operator', async () => {
        const check = async (path: string, op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in', value: unknown, pred: (r: StoredRecord) => boolean) => {
          const q = mine();
          q.where.push({ path, op, value } as never);
          const { rows: got } = await store.list('contract-things', q);
          assert.deepEqual(
            got.map((r) => r.id),
            rows.filter(pred).map((r) => r.id),
            `${path} ${op} ${JSON.stringify(value)}`,
          );
        };
        await check('count', 'eq', 3, (r) => r.count === 3);
        await check('count', 'ne', 3, (r) => r.count !== 3);
        await check('count', 'gt', 3, (r) => (r.count as number) > 3);
        await check('count', 'gte', 3, (r) => (r.count as number) >= 3);
        await check('count', 'lt', 3, (r) => (r.count as number) < 3);
        await check('count', 'lte', 3, (r) => (r.count as number) <= 3);
        await check('kind', 'in', ['a', 'c'], (r) => r.kind === 'a' || r.kind === 'c');
        await check('active', 'eq', false, (r) => r.active === false);
        await check('price.amount', 'gte', 300, (r) => (r.price as { amount: number }).amount >= 300);
        await check('owner_id', 'eq', null, (r) => r.owner_id === null);
        await check('owner_id', 'ne', null, (r) => r.owner_id !== null);
        await check('kind', 'in', [], () => false);
        // `in` binds its list as one parameter (issue 26.4): each column type still compares as with `eq`.
        await check('count', 'in', [0, 6, 6, 99], (r) => r.count === 0 || r.count === 6);
        await check('active', 'in', [true], (r) => r.active === true);
        await check('price.amount', 'in', [100, 400], (r) => [100, 400].includes((r.price as { amount: number }).amount));
        await check('owner_id', 'in', [ownerId, '00000000-0000-7000-8000-fffffffffff0'], (r) => r.owner_id === ownerId);
        await check('id', 'in', [rows[2]!.id, rows[29]!.id, rows[0]!.id], (r) => [rows[0]!.id, rows[2]!.id, rows[29]!.id].includes(r.id));
        await check('at', 'in', [rows[4]!.at, rows[5]!.at], (r) => r.at === rows[4]!.at || r.at === rows[5]!.at);
        await check('label', 'in', ['q1', 'it\'s "q"', 'q\\0', 'ü'], (r) => r.label === 'q1');
        await check(
          'count',
          'in',
          Array.from({ length: 100 }, (_, i) => i * 2),
          (r) => (r.count as number) % 2 === 0,
        );
      });

      it('reads the same rows whatever the order of the conditions', async () => {
        const a = { path: 'count', op: 'in' as const, value: [1, 2, 3] };
        const b = { path: 'kind', op: 'ne' as const, value: 'b' };
        const c = { path: 'price.amount', op: 'gte' as const, value: 100 };
        const orders = [
          [a, b, c],
          [c, b, a],
          [b, c, a],
        ];
        const results = [];
        for (const where of orders) results.push((await store.list('contract-things', mine({ where: [...mine().where, ...where] }))).rows.map((r) => r.id));
        const expected = rows
          .filter((r) => r.label !== undefined && ['q0', 'q1', 'q2'].includes(r.label as string))
          .filter((r) => [1, 2, 3].includes(r.count as number) && r.kind !== 'b' && (r.price as { amount: number }).amount >= 100)
          .map((r) => r.id);
        assert.ok(expected.length > 0);
        for (const got of results) assert.deepEqual(got, expected);
      });

      it('filters through a parent owner (owned_via)', async () => {
        const q = mine();
        q.where.push({ path: 'owner_id', op: 'owned_via', parent: 'owners', parentField: 'id', value: ownerId } as never);
        const { rows: got } = await store.list('contract-things', q);
        assert.equal(got.length, 10);
      });

      it('orders by several keys in mixed directions and continues from a keyset position', async () => {
        const orderBy = [
          { path: 'count', desc: true },
          { path: 'price.amount', desc: false },
          { path: 'id', desc: false },
        ];
        const expected = [...rows].sort(
          (a, b) => (b.count as number) - (a.count as number) || (a.price as { amount: number }).amount - (b.price as { amount: number }).amount || (a.id < b.id ? -1 : 1),
        );
        const seen: string[] = [];
        let after: unknown[] | undefined;
        for (let page = 0; page < 10; page++) {
          const { rows: got } = await store.list('contract-things', mine({ orderBy, limit: 7, ...(after ? { after } : {}) }));
          seen.push(...got.map((r) => r.id));
          if (got.length < 7) break;
          const last = got[got.length - 1]!;
          after = [last.count, (last.price as { amount: number }).amount, last.id];
        }
        assert.deepEqual(
          seen,
          expected.map((r) => r.id),
        );
      });

      it('counts totals and skips with offset', async () => {
        const { rows: got, total } = await store.list('contract-things', mine({ limit: 5, offset: 10, withTotal: true }));
        assert.equal(total, 30);
        assert.deepEqual(
          got.map((r) => r.id),
          rows.slice(10, 15).map((r) => r.id),
        );
      });

      it('finds one by a condition', async () => {
        const found = await store.findOne('owners', [{ path: 'email', op: 'eq', value: 'owner@example.com' }]);
        assert.equal(found?.id, ownerId);
        assert.equal(await store.findOne('owners', [{ path: 'email', op: 'eq', value: 'none@example.com' }]), null);
      });

      it('binds hostile values as parameters', async () => {
        const q = mine();
        q.where.push({ path: 'label', op: 'eq', value: "q0' OR 1=1 --" } as never);
        assert.equal((await store.list('contract-things', q)).rows.length, 0);
      });
    });

    it('walks keyset pages over a nullable sort key in both directions', async () => {
      const tag = `nulls-${id()}`;
      const made: StoredRecord[] = [];
      await store.transaction(async (tx) => {
        for (let i = 0; i < 12; i++) {
          const r = thing({ kind: 'c', tags: [tag], label: i % 3 === 0 ? null : `n${i % 4}`, count: 1000 + i });
          made.push(r);
          await tx.insert('contract-things', r);
        }
      });
      for (const desc of [false, true]) {
        const orderBy = [
          { path: 'label', desc },
          { path: 'id', desc: false },
        ];
        const cmp = (a: StoredRecord, b: StoredRecord): number => {
          const la = a.label as string | null;
          const lb = b.label as string | null;
          // Nulls first ascending, last descending.
          const byLabel = la === lb ? 0 : la === null ? -1 : lb === null ? 1 : la < lb ? -1 : 1;
          return (desc ? -byLabel : byLabel) || (a.id < b.id ? -1 : 1);
        };
        const seen: string[] = [];
        let after: unknown[] | undefined;
        for (let page = 0; page < 20; page++) {
          const { rows: got } = await store.list('contract-things', { where: [{ path: 'count', op: 'gte', value: 1000 }], orderBy, limit: 5, ...(after ? { after } : {}) });
          seen.push(...got.map((r) => r.id));
          if (got.length < 5) break;
          const last = got[got.length - 1]!;
          after = [last.label, last.id];
        }
        assert.deepEqual(
          seen,
          [...made].sort(cmp).map((r) => r.id),
          desc ? 'descending' : 'ascending',
        );
      }
    });

    it('a deep offset page (its rows found by key, then read: src/store/sql/queries.ts deferred) is the slice of the whole ordered list', async () => {
      const made: StoredRecord[] = [];
      for (let i = 0; i < 1_040; i++) {
        made.push(
          thing({
            label: i % 5 === 0 ? null : `d${i % 4}`,
            count: 7000 + (i % 6),
            at: i % 7 === 0 ? null : new Date(Date.UTC(2026, 2, 1 + (i % 9))).toISOString(),
            price: i % 8 === 0 ? null : { amount: 100 * (i % 3), currency: 'EUR' },
          }),
        );
      }
      await store.transaction((tx) => tx.insertMany('contract-things', made));
      const where = [
        { path: 'count', op: 'gte' as const, value: 7000 },
        { path: 'count', op: 'lt' as const, value: 7100 },
      ];
      for (const orderBy of ORDERS_WITH_NULLS_AND_TIES) {
        const whole = (await store.list('contract-things', { where, orderBy, limit: 2_000 })).rows.map((r) => r.id);
        assert.equal(whole.length, 1_040);
        for (const offset of [999, 1_000, 1_013, 1_035, 1_040]) {
          for (const shared of [false, true]) {
            const page = await store.list('contract-things', { where, orderBy, limit: 7, offset, withTotal: true, shared });
            assert.deepEqual(
              page.rows.map((r) => r.id),
              whole.slice(offset, offset + 7),
              `${JSON.stringify(orderBy)} offset ${offset}${shared ? ' (shared)' : ''}`,
            );
            assert.equal(page.total, 1_040);
          }
        }
      }
      await store.transaction(async (tx) => {
        for (const r of made) await tx.delete('contract-things', r.id);
      });
    });

    it('a shared offset page, read at any offset in any order and again after writes, is the page an unshared read gives', async () => {
      // Shared reads may be kept, and read from positions earlier pages taught (src/store/offset-seeks.ts):
      // whatever was read before, under any sort with nulls and ties, the rows must be the plain OFFSET's.
      const made: StoredRecord[] = [];
      await store.transaction(async (tx) => {
        for (let i = 0; i < 37; i++) {
          const r = thing({
            label: i % 5 === 0 ? null : `s${i % 4}`,
            count: 5000 + (i % 6),
            at: i % 7 === 0 ? null : new Date(Date.UTC(2026, 1, 1 + (i % 9))).toISOString(),
            price: i % 8 === 0 ? null : { amount: 100 * (i % 3), currency: 'EUR' },
          });
          made.push(r);
          await tx.insert('contract-things', r);
        }
      });
      const where = [
        { path: 'count', op: 'gte' as const, value: 5000 },
        { path: 'count', op: 'lt' as const, value: 5100 },
      ];
      const orders = [ORDERS_WITH_NULLS_AND_TIES[0]!, [{ path: 'id', desc: true }], ...ORDERS_WITH_NULLS_AND_TIES.slice(1)];
      const check = async (round: string): Promise<number> => {
        let compared = 0;
        for (const [o, orderBy] of orders.entries()) {
          const limit = 3 + (o % 4);
          // Every offset from 0 to past the end, in a scrambled order, each twice (a page read again may be kept).
          const offsets = Array.from({ length: 42 }, (_, i) => (i * 17 + o) % 42);
          for (const offset of [...offsets, ...offsets.reverse()]) {
            const query = { where, orderBy, limit, offset, withTotal: true };
            const shared = await store.list('contract-things', { ...query, shared: true });
            const plain = await store.list('contract-things', query);
            assert.deepEqual(
              shared.rows.map((r) => r.id),
              plain.rows.map((r) => r.id),
              `${round}: ${JSON.stringify(orderBy)} offset ${offset}`,
            );
            assert.equal(shared.total, plain.total);
            compared++;
          }
        }
        return compared;
      };
      assert.equal(await check('first reads'), orders.length * 84);
      // Writes in the middle of every order: positions learnt before them must not be used after.
      await store.transaction(async (tx) => {
        await tx.insert('contract-things', thing({ label: 's1', count: 5003, at: null, price: { amount: 100, currency: 'EUR' } }));
        await tx.delete('contract-things', made[11]!.id);
        await tx.update('contract-things', { ...made[20]!, version: 2, label: null, count: 5099 });
      });
      await check('after writes');
    });

    describe('full-text search', () => {
      const docs: StoredRecord[] = [];
      before(async () => {
        await store.transaction(async (tx) => {
          for (const [title, body] of [
            ['Burr grinder', 'Conical burrs grind coffee evenly'],
            ['Coffee mug', 'A mug for coffee or tea'],
            ['Tea kettle', 'Boils water; no grinder included'],
            ['Café au lait bowl', 'Wide bowl'],
          ] as const) {
            const r = thing({ title, body, count: 5000 });
            docs.push(r);
            await tx.insert('contract-things', r);
          }
        });
      });
      const search = (text: string, extra: Partial<Parameters<Store['list']>[1]> = {}) =>
        store.list('contract-things', {
          where: [{ path: 'count', op: 'eq', value: 5000 }],
          orderBy: [
            { path: '_rank', desc: false },
            { path: 'id', desc: false },
          ],
          limit: 10,
          search: text,
          ...extra,
        });

      it('finds by words of any searchable field, best match first, with ranks', async () => {
        const { rows, ranks } = await search('grinder');
        assert.deepEqual(
          rows.map((r) => r.title),
          ['Burr grinder', 'Tea kettle'],
        );
        assert.equal(ranks?.length, 2);
        assert.ok(ranks![0]! <= ranks![1]!);
        assert.deepEqual((await search('coffee mug')).rows[0]?.title, 'Coffee mug');
        assert.deepEqual(
          (await search('cafe')).rows.map((r) => r.title),
          ['Café au lait bowl'],
        );
        assert.deepEqual((await search('grind')).rows.map((r) => r.title).sort(), ['Burr grinder', 'Tea kettle'], 'the last word matches as a prefix');
      });

      it('combines with filters, totals and keyset positions', async () => {
        const all = await search('coffee', { withTotal: true });
        assert.equal(all.total, 2);
        const first = await search('coffee', { limit: 1 });
        const next = await search('coffee', { limit: 1, after: [first.ranks![0], first.rows[0]!.id] });
        assert.deepEqual(
          [...first.rows, ...next.rows].map((r) => r.id),
          all.rows.map((r) => r.id),
        );
        const filtered = await store.list('contract-things', {
          where: [{ path: 'count', op: 'eq', value: -1 }],
          orderBy: [{ path: 'id', desc: false }],
          limit: 10,
          search: 'coffee',
        });
        assert.equal(filtered.rows.length, 0);
      });

      it('follows updates and deletes', async () => {
        const doc = docs[1]!;
        await store.transaction((tx) => tx.update('contract-things', { ...doc, version: 2, title: 'Espresso cup', body: 'Small' }));
        assert.equal((await search('mug')).rows.length, 0);
        assert.equal((await search('espresso')).rows[0]?.id, doc.id);
        await store.transaction((tx) => tx.delete('contract-things', doc.id));
        assert.equal((await search('espresso')).rows.length, 0);
      });

      it('treats operators and punctuation from clients as plain words', async () => {
        for (const text of ['"', 'NEAR(a b)', 'title:grinder', '* OR -', 'a AND', '((', "'; DROP TABLE x; --"]) {
          await search(text);
        }
        assert.equal((await search('!!!')).rows.length, 0);
      });
    });

    describe('idempotency records', () => {
      const record = (scopeKey: string, expiresAt: number) => ({ scopeKey, fingerprint: `fp-${scopeKey}`, response: `{"status":201,"body":"${scopeKey}"}`, expiresAt });
      /** Empties the table: purges with a clock past every expiry, in bounded batches. */
      const purgeAll = async (): Promise<void> => {
        for (let i = 0; i < 100 && (await store.purgeIdempotency(Number.MAX_SAFE_INTEGER, 1000)) > 0; i++);
      };

      it('stores and finds a record by its scope key; an unknown key finds nothing', async () => {
        const r = record('idem-round-trip', Date.UTC(2027, 0, 1));
        await store.transaction((tx) => tx.insertIdempotency(r));
        assert.deepEqual(await store.findIdempotency(r.scopeKey), r);
        assert.equal(await store.findIdempotency('idem-unknown'), null);
        assert.deepEqual(await store.transaction((tx) => tx.findIdempotency(r.scopeKey)), r, 'a transaction reads it too');
      });

      it('refuses a second record for the same key with UniqueViolation, and the transaction rolls back whole', async () => {
        await store.transaction((tx) => tx.insertIdempotency(record('idem-twice', Date.UTC(2027, 0, 1))));
        const marker = thing({ label: 'idem-rolled-back' });
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.insert('contract-things', marker);
            await tx.insertIdempotency({ ...record('idem-twice', Date.UTC(2028, 0, 1)), fingerprint: 'other' });
          }),
          (err: unknown) => err instanceof UniqueViolation && err.resource === 'idempotency' && err.field === 'scope_key',
        );
        assert.equal(await store.get('contract-things', marker.id), null);
        assert.equal((await store.findIdempotency('idem-twice'))?.fingerprint, 'fp-idem-twice');
      });

      it('commits a record with its transaction or not at all', async () => {
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.insertIdempotency(record('idem-failed', Date.UTC(2027, 0, 1)));
            throw new Error('the side effect failed');
          }),
          /side effect failed/,
        );
        assert.equal(await store.findIdempotency('idem-failed'), null);
      });

      it('deletes a record under a key only once it has expired', async () => {
        await store.transaction((tx) => tx.insertIdempotency(record('idem-expiring', 5000)));
        assert.equal(await store.transaction((tx) => tx.deleteExpiredIdempotency('idem-expiring', 4999)), false);
        assert.ok(await store.findIdempotency('idem-expiring'));
        assert.equal(await store.transaction((tx) => tx.deleteExpiredIdempotency('idem-expiring', 5000)), true);
        assert.equal(await store.findIdempotency('idem-expiring'), null);
        await store.transaction((tx) => tx.insertIdempotency(record('idem-expiring', 9000)));
        assert.equal((await store.findIdempotency('idem-expiring'))?.expiresAt, 9000);
      });

      it('purges expired records oldest first, in bounded batches, stopping at the first live one', async () => {
        await purgeAll();
        for (const [key, expiresAt] of [
          ['p1', 1000],
          ['p2', 1000],
          ['p3', 1000],
          ['p4', 5000],
          ['p5', 1000],
        ] as const) {
          await store.transaction((tx) => tx.insertIdempotency(record(`idem-purge-${key}`, expiresAt)));
        }
        assert.equal(await store.purgeIdempotency(2000, 2), 2, 'a batch is bounded');
        assert.equal(await store.findIdempotency('idem-purge-p1'), null);
        assert.equal(await store.findIdempotency('idem-purge-p2'), null);
        assert.equal(await store.purgeIdempotency(2000, 100), 1, 'stops at the first live record');
        assert.equal(await store.findIdempotency('idem-purge-p3'), null);
        assert.ok(await store.findIdempotency('idem-purge-p4'));
        assert.ok(await store.findIdempotency('idem-purge-p5'), 'behind a live record: waits its turn');
        assert.equal(await store.purgeIdempotency(2000, 100), 0);
        assert.equal(await store.purgeIdempotency(5000, 100), 2, 'once the live one expires, both go');
        assert.equal(await store.purgeIdempotency(5000, 100), 0);
      });
    });

    describe('the credentials epoch', () => {
      const epochOf = async (s: Store): Promise<number> => s.credentialEpoch();

      it('moves when a transaction that bumps it commits, once however often it bumped, and not on rollback', async () => {
        const start = await epochOf(store);
        await store.transaction(async () => undefined);
        assert.equal(await epochOf(store), start, 'an ordinary commit leaves it');
        await store.transaction(async (tx) => tx.bumpCredentialEpoch());
        const once = await epochOf(store);
        assert.ok(once > start);
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.bumpCredentialEpoch();
            throw new Error('rolled back');
          }),
        );
        assert.equal(await epochOf(store), once, 'a rollback leaves it');
      });

      it('moves for another store on the same database (another process) from its next read on', { skip: sibling ? false : 'one connection only' }, async () => {
        const other = await sibling!();
        try {
          await other.migrate(model);
          const before = await epochOf(other);
          assert.equal(before, await epochOf(store));
          await store.transaction(async (tx) => tx.bumpCredentialEpoch());
          const mine = await epochOf(store);
          // Another process sees the change by its next request; in a test, after one turn of the event loop.
          let seen = await epochOf(other);
          for (let i = 0; i < 100 && seen !== mine; i++) {
            await new Promise((r) => setTimeout(r, 10));
            seen = await epochOf(other);
          }
          assert.equal(seen, mine);
          await other.transaction(async (tx) => tx.bumpCredentialEpoch());
          let back = await epochOf(store);
          for (let i = 0; i < 100 && back === mine; i++) {
            await new Promise((r) => setTimeout(r, 10));
            back = await epochOf(store);
          }
          assert.ok(back > mine, 'and the other way round');
        } finally {
          await other.close();
        }
      });
    });

    it('applies additive model changes on migrate', async () => {
      const extended = defineApp({
        resources: [owners, defineResource({ ...things, fields: { ...things.fields, extra: f.string({ filterable: true }) } })],
        users: 'owners',
      });
      const m2 = compileModel(extended);
      await store.migrate(m2);
      const a = thing({ extra: 'new column' });
      await store.transaction((tx) => tx.insert('contract-things', a));
      assert.equal((await store.get('contract-things', a.id))?.extra, 'new column');
      const { rows: got } = await store.list('contract-things', { where: [{ path: 'extra', op: 'eq', value: 'new column' }], orderBy: [{ path: 'id', desc: false }], limit: 10 });
      assert.equal(got.length, 1);
    });
  });
}
