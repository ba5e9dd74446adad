// A new SQLite file opened while another process holds its write lock (both switching it to WAL): the open waits, bounded by the busy timeout.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';

const HANDLES = new URL('../../../src/store/sqlite/native-handles.js', import.meta.url).href;

/**
 * Another process holding the write lock of `file`, still in rollback mode, for `holdMs`: what a process in the
 * middle of its own switch to WAL holds. Resolves once the lock is held. Its own process, as the store's open waits
 * synchronously (SQLite's busy handler does too), which would stall a holder on this event loop.
 */
async function holdWriteLock(file: string, holdMs: number): Promise<ChildProcess> {
  const script = `
    const { openDatabase } = await import(${JSON.stringify(HANDLES)});
    const db = openDatabase(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('held\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the holder did not take the lock in 20 s')), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('held')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the holder exited with ${code} before taking the lock`));
    });
  });
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('SQLite: opening a new file another process is switching to WAL', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await Promise.all(children.map(exited));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  function newFile(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'canon-wal-switch-'));
    dirs.push(dir);
    const file = path.join(dir, 'canon.sqlite');
    closeSync(openSync(file, 'a', 0o600));
    return file;
  }

  it('waits for the lock to go (SQLite alone answers SQLITE_BUSY at once), then opens in WAL and migrates', async () => {
    const file = newFile();
    const holder = await holdWriteLock(file, 300);
    children.push(holder);
    const store = new SqliteStore({ path: file, busyTimeoutMs: 10_000 });
    try {
      await store.migrate(compileModel(withPlatform(commerce)));
      // WAL is the file's, not the connection's: a connection of its own reads it.
      const other = openDatabase(file);
      try {
        assert.equal(other.prepare('PRAGMA journal_mode').pluck().get(), 'wal');
      } finally {
        other.close();
      }
    } finally {
      await store.close();
    }
    await exited(holder);
    assert.equal(holder.exitCode, 0, 'the holder committed and closed');
  });

  it('gives up with SQLITE_BUSY once the busy timeout has passed', async () => {
    const file = newFile();
    const holder = await holdWriteLock(file, 5_000);
    children.push(holder);
    const started = performance.now();
    assert.throws(
      () => new SqliteStore({ path: file, busyTimeoutMs: 200 }),
      (err: unknown) => (err as { code?: string }).code === 'SQLITE_BUSY',
    );
    const waited = performance.now() - started;
    assert.ok(waited >= 150 && waited < 4_000, `waited ${waited.toFixed(0)} ms, about the 200 ms timeout`);
    holder.kill('SIGKILL');
  });
});
