// Issue 13.9: SQLite commits are durable through power loss by default (synchronous=FULL); CANON_SQLITE_SYNCHRONOUS=normal is the stated trade-off.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fromEnv, resolveConfig } from '../../../src/config/config.js';
import { commerce } from '../../../examples/commerce/index.js';
import { createRuntime } from '../../../src/runtime/compose.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';

describe('SQLite durability', () => {
  const dir = mkdtempSync(join(tmpdir(), 'canon-sync-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const synchronousOf = async (env: NodeJS.ProcessEnv): Promise<number> => {
    const config = resolveConfig({
      ...fromEnv(env),
      databaseUrl: `sqlite:${join(dir, `${Math.random()}.db`)}`,
      seed: false,
      secret: 's',
      passwordCost: TEST_PASSWORD_COST,
      logLevel: 'silent',
    });
    const runtime = await createRuntime(config, { logger: false, appDef: commerce });
    try {
      assert.ok(runtime.store instanceof SqliteStore);
      return runtime.store.synchronous;
    } finally {
      await runtime.close();
    }
  };

  it('is FULL (2) by default: the WAL is synced at every commit', async () => {
    assert.equal(await synchronousOf({}), 2);
  });

  it('is NORMAL (1) with CANON_SQLITE_SYNCHRONOUS=normal (or NORMAL)', async () => {
    assert.equal(await synchronousOf({ CANON_SQLITE_SYNCHRONOUS: 'normal' }), 1);
    assert.equal(await synchronousOf({ CANON_SQLITE_SYNCHRONOUS: 'NORMAL' }), 1);
    assert.equal(await synchronousOf({ CANON_SQLITE_SYNCHRONOUS: 'full' }), 2);
  });

  it('refuses any other value at start', () => {
    assert.throws(() => fromEnv({ CANON_SQLITE_SYNCHRONOUS: 'off' }), /CANON_SQLITE_SYNCHRONOUS must be one of full, normal/);
  });
});
