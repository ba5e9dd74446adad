// PostgreSQL page statements with their LIMIT in the text (Dialect.limitInText): a keyset page and a first page get a generic plan PostgreSQL reuses, instead of a custom plan at every run.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import type { ListQuery } from '../../../src/store/types.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

interface Plans {
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

describe('PostgreSQL page statements and their plans', { skip: PG_SKIP }, () => {
  let core: Core;
  let database: TestDatabase;
  let pool: pg.Pool;
  /** Whether this PostgreSQL counts plans per statement (pg_prepared_statements.generic_plans: version 14 on). */
  let counted = false;

  before(async () => {
    database = await createTestDatabase();
    // One pooled connection: the pages and the look at their prepared statements run in one session.
    const config = resolveConfig({ databaseUrl: database.url, seed: false, secret: 'pg-generic-plans', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent', dbPoolSize: 1 });
    core = await openCore(config, { appDef: commerce, logger: false });
    pool = (core.store as unknown as { pool: pg.Pool }).pool;
    counted = (await pool.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'pg_prepared_statements' AND column_name = 'generic_plans'")).rowCount === 1;
    for (let i = 0; i < 60; i++) {
      await core.services.create({ principal: SYSTEM }, 'products', { name: `Planned ${i}`, price: { amount: 100 + i, currency: 'EUR' }, status: i % 2 ? 'active' : 'draft' });
    }
  });
  after(async () => {
    await core?.close();
    await database?.drop();
  });

  /** Runs `query` (the store's own list, no cache in the way: a transaction's read) and returns the plans of its statement. */
  const plansOf = async (query: ListQuery, runs: number, vary: (q: ListQuery, i: number) => ListQuery): Promise<Plans> => {
    for (let i = 0; i < runs; i++) await core.store.transaction((tx) => tx.list('products', vary(query, i)));
    const { rows } = await pool.query<Plans>(
      'SELECT statement, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE statement LIKE \'SELECT %FROM "products"%ORDER BY%\' ORDER BY generic_plans + custom_plans DESC LIMIT 1',
    );
    assert.ok(rows[0], 'the page statement is prepared');
    await pool.query('DEALLOCATE ALL');
    return rows[0];
  };

  it('a keyset page (a cursor walk) has its LIMIT in the text and is planned a few times, then runs its generic plan', async (t) => {
    const base: ListQuery = {
      where: [{ path: 'status', op: 'eq', value: 'active' }],
      orderBy: [
        { path: 'price.amount', desc: true },
        { path: 'id', desc: true },
      ],
      limit: 5,
    };
    const plans = await plansOf(base, 12, (q, i) => ({ ...q, after: [200 - i, 'ffffffff-ffff-7fff-bfff-ffffffffffff'] }));
    assert.match(plans.statement, / LIMIT 5$/);
    if (!counted) return t.skip('PostgreSQL before 14 does not count plans per statement');
    assert.ok(Number(plans.generic_plans) > 0, `generic plans: ${plans.generic_plans}, custom: ${plans.custom_plans}`);
    assert.ok(Number(plans.custom_plans) <= 5, `custom plans: ${plans.custom_plans}`);
  });

  it('a first page likewise; an offset page keeps its OFFSET bound (any offset, one text)', async (t) => {
    const base: ListQuery = { where: [], orderBy: [{ path: 'id', desc: false }], limit: 7 };
    const first = await plansOf(base, 12, (q, i) => ({ ...q, where: [{ path: 'status', op: 'eq', value: i % 2 ? 'active' : 'draft' }] }));
    assert.match(first.statement, / LIMIT 7$/);
    const offset = await plansOf(base, 12, (q, i) => ({ ...q, offset: 1 + i }));
    assert.match(offset.statement, / LIMIT 7 OFFSET \$1$/);
    if (!counted) return t.skip('PostgreSQL before 14 does not count plans per statement');
    assert.ok(Number(first.generic_plans) > 0, `first page: generic ${first.generic_plans}, custom ${first.custom_plans}`);
  });
});
