// SQLite's idempotency directory: exact across connections sharing a file, after purges and rollbacks, on hash collisions, and from an older table.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Statement } from 'better-sqlite3';
import { openDatabase, prepare } from '../../../src/store/sqlite/native-handles.js';
import { compileModel } from '../../../src/model/compile.js';
import { IdempotencyDirectory, keyHash } from '../../../src/store/sqlite/idempotency-directory.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { UniqueViolation, type IdempotencyRecord } from '../../../src/store/types.js';
import { idempotencyTable } from '../../../src/store/sql/idempotency.js';
import { contractApp } from '../../contract/store/contract.js';

const dir = mkdtempSync(join(tmpdir(), 'canon-idempotency-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const LATER = Date.UTC(2030, 0, 1);
const record = (scopeKey: string, expiresAt = LATER, fingerprint = `fp-${scopeKey}`): IdempotencyRecord => ({
  scopeKey,
  fingerprint,
  response: `{"status":201,"body":"${scopeKey}"}`,
  expiresAt,
});

async function openStore(file: string): Promise<SqliteStore> {
  const store = new SqliteStore({ path: join(dir, file) });
  await store.migrate(compileModel(contractApp));
  return store;
}

const isUniqueViolation = (err: unknown): boolean => err instanceof UniqueViolation && err.resource === 'idempotency' && err.field === 'scope_key';

/** Two stores on one file, each with its own connections and directory, as two processes would have. */
async function withTwoStores(file: string, fn: (a: SqliteStore, b: SqliteStore) => Promise<void>): Promise<void> {
  const a = await openStore(file);
  const b = await openStore(file);
  try {
    await fn(a, b);
  } finally {
    await a.close();
    await b.close();
  }
}

describe('sqlite idempotency directory', () => {
  it('is exact across two stores on one file, as two processes would be', async () => {
    await withTwoStores('two.db', async (a, b) => {
      await a.transaction((tx) => tx.insertIdempotency(record('k1')));
      assert.deepEqual(await b.findIdempotency('k1'), record('k1'), 'the other store reads what this one committed');
      await assert.rejects(
        b.transaction((tx) => tx.insertIdempotency(record('k1', LATER, 'other'))),
        isUniqueViolation,
      );
      await b.transaction((tx) => tx.insertIdempotency(record('k2')));
      assert.deepEqual(await a.findIdempotency('k2'), record('k2'));
      await assert.rejects(
        a.transaction((tx) => tx.insertIdempotency(record('k2'))),
        isUniqueViolation,
      );
      assert.equal(await a.findIdempotency('k3'), null);
    });
  });

  it('reads the table again when the last row it saw is gone and its seq was given to another key', async () => {
    await withTwoStores('reuse.db', async (a, b) => {
      await a.transaction((tx) => tx.insertIdempotency(record('old', 1000)));
      assert.ok(await b.findIdempotency('old'), 'b has read the row');
      // Everything expired: the purge empties the table, and the next row takes the same seq again.
      assert.equal(await a.purgeIdempotency(2000, 100), 1);
      await a.transaction((tx) => tx.insertIdempotency(record('new')));
      assert.deepEqual(await b.findIdempotency('new'), record('new'));
      assert.equal(await b.findIdempotency('old'), null);
      await assert.rejects(
        b.transaction((tx) => tx.insertIdempotency(record('new'))),
        isUniqueViolation,
      );
    });
  });

  it('forgets a rolled-back insert, and sees an expired key replaced in the same transaction from the other store', async () => {
    await withTwoStores('rollback.db', async (a, b) => {
      await assert.rejects(
        a.transaction(async (tx) => {
          await tx.insertIdempotency(record('rolled'));
          assert.deepEqual(await tx.findIdempotency('rolled'), record('rolled'), 'its own transaction sees it');
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal(await a.findIdempotency('rolled'), null);
      await a.transaction((tx) => tx.insertIdempotency(record('rolled')));
      assert.ok(await b.findIdempotency('rolled'));

      await a.transaction((tx) => tx.insertIdempotency(record('renewed', 5000)));
      assert.equal((await b.findIdempotency('renewed'))?.expiresAt, 5000);
      await b.transaction(async (tx) => {
        assert.equal(await tx.deleteExpiredIdempotency('renewed', 5000), true);
        await tx.insertIdempotency(record('renewed', 9000));
      });
      assert.equal((await a.findIdempotency('renewed'))?.expiresAt, 9000);
      assert.equal((await b.findIdempotency('renewed'))?.expiresAt, 9000);
    });
  });

  it('tells apart keys whose hashes collide, and forgets purged rows', () => {
    const db = openDatabase(':memory:');
    db.exec(idempotencyTable('seq INTEGER PRIMARY KEY', false));
    const seed = 12345;
    // Birthday search for two keys with one 31-bit hash: bounded, and found within ~2^16 tries in practice.
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; i < 1_000_000 && !pair; i++) {
      const key = `user:u\ncollide-${i}`;
      const h = keyHash(key, seed);
      const other = seen.get(h);
      if (other !== undefined) pair = [other, key];
      else seen.set(h, key);
    }
    assert.ok(pair, 'two keys with one hash');
    const [x, y] = pair;
    const statements = new Map<string, Statement>();
    const cached = (sql: string): Statement => statements.get(sql) ?? statements.set(sql, prepare(db, sql)).get(sql)!;
    const directory = new IdempotencyDirectory(cached, seed);
    const inTx = <T>(fn: () => T): T => {
      db.exec('BEGIN IMMEDIATE');
      directory.begin();
      try {
        const result = fn();
        db.exec('COMMIT');
        directory.commit();
        return result;
      } catch (err) {
        db.exec('ROLLBACK');
        directory.rollback();
        throw err;
      }
    };
    inTx(() => {
      directory.insert(record(x, 1000));
      assert.equal(directory.find(x)?.expiresAt, 1000, 'its own transaction sees it');
    });
    assert.equal(directory.size, 1, 'one entry for one row: joined at commit, not also when its transaction read it');
    assert.equal(directory.find(y), null, 'a colliding key that has no row finds nothing');
    inTx(() => directory.insert(record(y, 3000)));
    assert.equal(directory.find(x)?.fingerprint, `fp-${x}`);
    assert.equal(directory.find(y)?.fingerprint, `fp-${y}`);
    assert.throws(() => inTx(() => directory.insert(record(x))), isUniqueViolation);
    assert.equal(
      inTx(() => directory.deleteExpired(x, 2000)),
      true,
    );
    assert.equal(directory.find(x), null);
    assert.equal(directory.find(y)?.expiresAt, 3000, 'its neighbour in the hash is untouched');
    inTx(() => directory.insert(record(x, 4000)));
    assert.equal(directory.find(x)?.expiresAt, 4000);

    assert.equal(directory.purge(3500, 100), 1, 'y expired');
    assert.equal(directory.find(y), null);
    assert.equal(directory.find(x)?.expiresAt, 4000);
    assert.equal(directory.purge(5000, 100), 1);
    assert.equal(directory.size, 0, 'purged rows leave the directory');
    db.close();
  });

  it('moves records of a table made with a UNIQUE index into the new form', async () => {
    const file = join(dir, 'older.db');
    const db = openDatabase(file);
    db.exec(idempotencyTable('seq INTEGER PRIMARY KEY', true));
    prepare(db, 'INSERT INTO canon_idempotency (scope_key, fingerprint, response, expires_at) VALUES (?, ?, ?, ?)').run('kept', 'fp-kept', '{"status":201,"body":"kept"}', LATER);
    db.close();
    const store = await openStore('older.db');
    try {
      assert.deepEqual(await store.findIdempotency('kept'), record('kept'));
      await assert.rejects(
        store.transaction((tx) => tx.insertIdempotency(record('kept'))),
        isUniqueViolation,
      );
      await store.transaction((tx) => tx.insertIdempotency(record('added')));
      assert.ok(await store.findIdempotency('added'));
    } finally {
      await store.close();
    }
    const check = openDatabase(file, { readonly: true });
    const indexes = prepare(check, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'canon_idempotency'").all();
    check.close();
    assert.deepEqual(indexes, [], 'no index left to write on every keyed POST');
  });
});
