// PostgreSQL writes of one row and the epoch read run as named statements (src/store/postgres/pg-ops.ts, epoch-reader.ts): parsed and planned once per connection, not once per run.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

describe('PostgreSQL named writes', { skip: PG_SKIP }, () => {
  let core: Core;
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
    // One pooled connection: every statement of the store, and the look at what it prepared, run in one session.
    const config = resolveConfig({ databaseUrl: database.url, seed: false, secret: 'pg-named-writes', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent', dbPoolSize: 1 });
    core = await openCore(config, { appDef: commerce, logger: false });
  });
  after(async () => {
    await core?.close();
    await database?.drop();
  });

  /** The statements the store's one connection has prepared (pg_prepared_statements is per session). */
  const prepared = async (): Promise<string[]> => {
    const pool = (core.store as unknown as { pool: pg.Pool }).pool;
    const { rows } = await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY statement');
    return rows.map((r) => r.statement);
  };

  /** A product created, changed and deleted through the services: an INSERT, an UPDATE and a DELETE, each with its event. */
  const roundTrip = async (n: number): Promise<void> => {
    const created = await core.services.create({ principal: SYSTEM }, 'products', { name: `Named ${n}`, price: { amount: 100 + n, currency: 'EUR' }, status: 'active' });
    await core.services.update({ principal: SYSTEM }, 'products', created.record.id, 'patch', { price: { amount: 200 + n, currency: 'EUR' } });
    await core.services.remove({ principal: SYSTEM }, 'products', created.record.id);
  };

  it('prepares the INSERT, UPDATE and DELETE of a row, the event and the transaction id once, and reuses them for the next writes', async () => {
    await roundTrip(1);
    const first = await prepared();
    for (const shape of [
      /^INSERT INTO "products" \(/,
      /^UPDATE "products" SET /,
      /^DELETE FROM "products" WHERE id = \$1$/,
      /^INSERT INTO canon_events \(/,
      /^SELECT txid_current\(\) AS xid$/,
    ]) {
      assert.ok(
        first.some((s) => shape.test(s)),
        `${String(shape)} is prepared; prepared: ${first.map((s) => s.slice(0, 60)).join(' | ')}`,
      );
    }
    await roundTrip(2);
    await roundTrip(3);
    const later = (await prepared()).filter((s) => /^(INSERT|UPDATE|DELETE)/.test(s));
    assert.deepEqual(
      later,
      first.filter((s) => /^(INSERT|UPDATE|DELETE)/.test(s)),
      'no write prepared a second statement',
    );
  });

  it('reads the credentials epoch with a named statement on its dedicated connection', async () => {
    const reader = (core.store as unknown as { epoch: { client?: pg.Client } }).epoch;
    // The dedicated connection starts in the background after the first read; reads go through the pool until then.
    for (let attempt = 0; attempt < 100 && reader.client === undefined; attempt++) {
      await core.store.credentialEpoch();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(reader.client, 'the dedicated connection is up');
    await core.store.credentialEpoch();
    await core.store.credentialEpoch();
    const { rows } = await reader.client.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    assert.deepEqual(
      rows.map((r) => r.statement),
      ['SELECT epoch, txid_current_snapshot()::text AS snapshot FROM canon_credential_epoch WHERE id = 1'],
    );
  });
});
