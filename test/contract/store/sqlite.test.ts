// Runs the store contract suite on SQLite, in memory and on a WAL file, plus SQLite-only isolation checks.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { compileModel } from '../../../src/model/compile.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { contractApp, storeContract } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'canon-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

storeContract('sqlite in memory', async () => new SqliteStore({ path: ':memory:' }));
storeContract(
  'sqlite file (WAL)',
  async () => new SqliteStore({ path: join(dir, 'contract.db') }),
  async () => new SqliteStore({ path: join(dir, 'contract.db') }),
);

describe('sqlite isolation', () => {
  for (const path of [':memory:', join(dir, 'isolation.db')]) {
    it(`plain reads never see an open transaction's writes (${path === ':memory:' ? 'memory' : 'file'})`, async () => {
      const store = new SqliteStore({ path });
      await store.migrate(compileModel(contractApp));
      const now = new Date().toISOString();
      const record = { id: '00000000-0000-7000-8000-ffffffffffff', version: 1, created_at: now, updated_at: now, email: 'iso@example.com', name: null, role: null };
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const tx = store.transaction(async (t) => {
        await t.insert('owners', record);
        await gate;
      });
      await new Promise((r) => setImmediate(r));
      const during = store.get('owners', record.id);
      // On files the read connection answers at once; in memory the read waits for the commit.
      if (path !== ':memory:') assert.equal(await during, null);
      release();
      await tx;
      if (path === ':memory:') assert.deepEqual(await during, record);
      assert.deepEqual(await store.get('owners', record.id), record);
      await store.close();
    });
  }
});

describe('sqlite idempotency look-ups', () => {
  for (const path of [':memory:', join(dir, 'idempotency-wait.db')]) {
    it(`wait for a transaction in progress and then see what it committed (${path === ':memory:' ? 'memory' : 'file'})`, async () => {
      const store = new SqliteStore({ path });
      await store.migrate(compileModel(contractApp));
      const record = { scopeKey: 'wait-key', fingerprint: 'f', response: '{}', expiresAt: Date.UTC(2030, 0, 1) };
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const tx = store.transaction(async (t) => {
        await t.insertIdempotency(record);
        await gate;
      });
      await new Promise((r) => setImmediate(r));
      let answered = false;
      const during = store.findIdempotency('wait-key').then((found) => {
        answered = true;
        return found;
      });
      await new Promise((r) => setImmediate(r));
      assert.equal(answered, false, 'never an uncommitted record: the look-up waits for the writer');
      release();
      await tx;
      assert.deepEqual(await during, record);
      await store.close();
    });
  }
});

describe('sqlite read cache', () => {
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  const now = new Date().toISOString();
  const owner = (id: string, name: string, version = 1): Record<string, unknown> & { id: string; version: number; created_at: string; updated_at: string } => ({
    id,
    version,
    created_at: now,
    updated_at: now,
    email: `${id.slice(-4)}@example.com`,
    name,
  });

  it('hands out frozen records, and a commit in this process is seen by the very next read', async () => {
    const store = new SqliteStore({ path: join(dir, 'cache-local.db') });
    await store.migrate(compileModel(contractApp));
    const id = '00000000-0000-7000-8000-00000000c001';
    await store.transaction((t) => t.insert('owners', owner(id, 'first')));
    const a = await store.get('owners', id);
    assert.ok(a && Object.isFrozen(a));
    assert.equal(await store.get('owners', id), a, 'a second read is served from the cache');
    assert.throws(() => {
      (a as Record<string, unknown>).name = 'changed';
    }, TypeError);
    await store.transaction((t) => t.update('owners', owner(id, 'second', 2)));
    assert.equal((await store.get('owners', id))?.name, 'second');
    await store.transaction((t) => t.delete('owners', id));
    assert.equal(await store.get('owners', id), null);
    await store.close();
  });

  it("another process's commit (another connection on the file) is seen from the next event-loop turn", async () => {
    const path = join(dir, 'cache-shared.db');
    const model = compileModel(contractApp);
    const server = new SqliteStore({ path });
    const cli = new SqliteStore({ path });
    await server.migrate(model);
    await cli.migrate(model);
    const id = '00000000-0000-7000-8000-00000000c002';
    await cli.transaction((t) => t.insert('owners', owner(id, 'first')));
    await turn();
    assert.equal((await server.get('owners', id))?.name, 'first');
    await cli.transaction((t) => t.update('owners', owner(id, 'second', 2)));
    await turn();
    assert.equal((await server.get('owners', id))?.name, 'second');
    await cli.close();
    await server.close();
  });
});
