// Issue 13.9: SQLite commits are durable through power loss by default (the WAL synced before a writer is answered); CANON_SQLITE_SYNCHRONOUS=normal is the stated trade-off.
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

  /** The store's WAL syncs around one write: undefined when it syncs nothing; and the connection's `synchronous` pragma. */
  const durabilityOf = async (env: NodeJS.ProcessEnv): Promise<{ pragma: number; synced: boolean | undefined }> => {
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
      const store = runtime.store;
      assert.ok(store instanceof SqliteStore);
      const before = store.walSyncs;
      // A write (the meta row, inserted when absent), answered: whether a sync had finished by then.
      await store.metaValue('durability-test', 'x');
      const after = store.walSyncs;
      return { pragma: store.synchronous, synced: before === undefined || after === undefined ? undefined : after > before };
    } finally {
      await runtime.close();
    }
  };

  it('is full by default: the WAL is synced after every commit, before its writer is answered (off the event loop, so the pragma is NORMAL)', async () => {
    assert.deepEqual(await durabilityOf({}), { pragma: 1, synced: true });
    assert.deepEqual(await durabilityOf({ CANON_SQLITE_SYNCHRONOUS: 'full' }), { pragma: 1, synced: true });
  });

  it('is normal with CANON_SQLITE_SYNCHRONOUS=normal (or NORMAL): nothing synced at commit', async () => {
    assert.deepEqual(await durabilityOf({ CANON_SQLITE_SYNCHRONOUS: 'normal' }), { pragma: 1, synced: undefined });
    assert.deepEqual(await durabilityOf({ CANON_SQLITE_SYNCHRONOUS: 'NORMAL' }), { pragma: 1, synced: undefined });
  });

  it('refuses any other value at start', () => {
    assert.throws(() => fromEnv({ CANON_SQLITE_SYNCHRONOUS: 'off' }), /CANON_SQLITE_SYNCHRONOUS must be one of full, normal/);
  });
});
