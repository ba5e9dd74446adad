// A SQLite file shared by processes: a write that cannot get the write lock within the busy timeout is StoreBusy (503, Retry-After), not a raw SQLITE_BUSY (a 500).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { StoreBusy } from '../../../src/store/types.js';

describe('SQLite: another process holding the write lock', () => {
  let dir = '';
  let store: SqliteStore;
  let other: Database.Database;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'canon-sqlite-busy-'));
    const file = path.join(dir, 'canon.sqlite');
    store = new SqliteStore({ path: file, busyTimeoutMs: 100 });
    await store.migrate(compileModel(withPlatform(commerce)));
    // Another process's connection to the same file (its own handle: locks are per connection).
    other = openDatabase(file);
  });
  after(async () => {
    other?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a write waiting past the busy timeout is refused with StoreBusy, nothing written; once the lock is let go, writes go through', async () => {
    const before = await store.credentialEpoch();
    other.exec('BEGIN IMMEDIATE');
    try {
      await assert.rejects(
        store.transaction((tx) => tx.bumpCredentialEpoch()),
        (err: unknown) => err instanceof StoreBusy && (err.cause as { code?: string }).code === 'SQLITE_BUSY',
      );
    } finally {
      other.exec('COMMIT');
    }
    assert.equal(await store.credentialEpoch(), before, 'the refused write left nothing');
    await store.transaction((tx) => tx.bumpCredentialEpoch());
    assert.equal(await store.credentialEpoch(), before + 1);
  });
});
