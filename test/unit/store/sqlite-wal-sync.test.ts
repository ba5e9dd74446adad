// SQLite's commits made durable off the event loop (src/store/sqlite/wal-sync.ts): the WAL synced before a writer is answered, syncs shared by the commits made while one runs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { WalSync } from '../../../src/store/sqlite/wal-sync.js';

describe('WAL sync', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'canon-wal-sync-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const walOf = (name: string): string => {
    const file = path.join(dir, name);
    const db = openDatabase(file);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT)');
    return `${file}-wal`;
  };

  it('one caller: one sync; callers while a sync runs share the next one, not one each', async () => {
    const sync = new WalSync(walOf('a.db'));
    await sync.afterCommit();
    assert.equal(sync.completed, 1);
    // The first starts a sync at once; the nine after it began may have committed after it started, so they wait
    // for one more, which they share.
    await Promise.all(Array.from({ length: 10 }, () => sync.afterCommit()));
    assert.equal(sync.completed, 3);
    sync.syncNow();
    assert.equal(sync.completed, 4);
    sync.close();
  });

  it('a WAL that cannot be opened refuses the callers with the error, and the next caller tries again', async () => {
    const sync = new WalSync(path.join(dir, 'missing', 'x.db-wal'));
    await assert.rejects(sync.afterCommit(), { code: 'ENOENT' });
    await assert.rejects(sync.afterCommit(), { code: 'ENOENT' });
    assert.equal(sync.completed, 0);
  });
});
