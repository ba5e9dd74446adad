// Runs the store contract suite on PostgreSQL, in a database made for this run, plus migration under concurrency.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { compileModel } from '../../../src/model/compile.js';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';
import { contractApp, storeContract } from './contract.js';

if (PG_SKIP) {
  describe('store contract: postgres', () => {
    it('needs PostgreSQL', { skip: PG_SKIP }, () => undefined);
  });
} else {
  const dbs: TestDatabase[] = [];
  after(async () => {
    for (const db of dbs) await db.drop();
  });
  storeContract(
    'postgres',
    async () => {
      const db = await createTestDatabase();
      dbs.push(db);
      return new PgStore({ connectionString: db.url });
    },
    async () => new PgStore({ connectionString: dbs[dbs.length - 1]!.url }),
  );

  describe('postgres migrations', () => {
    it('several processes migrating at once serialise on the advisory lock', async () => {
      const db = await createTestDatabase();
      dbs.push(db);
      const stores = Array.from({ length: 4 }, () => new PgStore({ connectionString: db.url, max: 2 }));
      await Promise.all(stores.map((s) => s.migrate(compileModel(contractApp))));
      for (const s of stores) assert.equal(await s.ping(), true);
      await Promise.all(stores.map((s) => s.close()));
    });
  });
}
