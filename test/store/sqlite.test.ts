// Runs the store contract suite on SQLite, in memory and on a WAL file, plus SQLite-only isolation checks.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { compileModel } from '../../src/model/compile.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { contractApp, storeContract } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'canon-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

storeContract('sqlite in memory', async () => new SqliteStore({ path: ':memory:' }));
storeContract('sqlite file (WAL)', async () => new SqliteStore({ path: join(dir, 'contract.db') }));

describe('sqlite isolation', () => {
  for (const path of [':memory:', join(dir, 'isolation.db')]) {
    it(`plain reads never see an open transaction's writes (${path === ':memory:' ? 'memory' : 'file'})`, async () => {
      const store = new SqliteStore({ path });
      await store.migrate(compileModel(contractApp));
      const now = new Date().toISOString();
      const record = { id: '00000000-0000-7000-8000-ffffffffffff', version: 1, created_at: now, updated_at: now, email: 'iso@example.com', name: null };
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
