// The admin key made sure of by processes starting at once on one database (ensureAdminKey): one of them inserts it, the others find it, none fails to start.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { API_KEYS, hashApiKey } from '../../../src/platform/api-key-secrets.js';
import { ensureAdminKey } from '../../../src/runtime/admin-key.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

describe('the admin key, ensured by processes at once (PostgreSQL)', { skip: PG_SKIP }, () => {
  let database: TestDatabase;
  const cores: Core[] = [];

  before(async () => {
    database = await createTestDatabase();
    // Four cores on one database, as four processes starting at once hold: each its own pool.
    for (let i = 0; i < 4; i++) {
      const config = resolveConfig({ databaseUrl: database.url, seed: false, secret: 'admin-key-race', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
      cores.push(await openCore(config, { appDef: commerce, logger: false }));
    }
  });
  after(async () => {
    for (const core of cores) await core.close();
    await database?.drop();
  });

  it('one inserts it and the others find it, in every round, however their transactions interleave', async () => {
    for (let round = 0; round < 10; round++) {
      const secret = `ck_test_admin_race_${round}_0123456789abcdef0123`;
      const now = new Date().toISOString();
      const created = await Promise.all(cores.map((core) => ensureAdminKey(core.services, core.model, secret, `admin ${round}`, now)));
      assert.equal(created.filter(Boolean).length, 1, `round ${round}: ${JSON.stringify(created)}`);
      const rows = await cores[0]!.store.list(API_KEYS, { where: [{ path: 'key_hash', op: 'eq', value: hashApiKey(secret) }], orderBy: [{ path: 'id', desc: false }], limit: 10 });
      assert.equal(rows.rows.length, 1);
    }
  });
});
