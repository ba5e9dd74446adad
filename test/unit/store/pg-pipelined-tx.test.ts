// PostgreSQL transactions in fewer round trips (src/store/postgres/pipelined-tx.ts): BEGIN with the first statement, a deferred statement with the COMMIT, and nothing reported committed that PostgreSQL rolled back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import { PipelinedTx } from '../../../src/store/postgres/pipelined-tx.js';
import { productRow, rowId } from '../../support/list-rows.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

describe('PostgreSQL pipelined transactions', { skip: PG_SKIP }, () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  before(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2, pipeline: true });
    await pool.query('CREATE TABLE t (a int PRIMARY KEY)');
  });
  after(async () => {
    await pool?.end();
    await database?.drop();
  });

  /** A checked-out connection whose socket writes (one per gathered batch) and reads are counted. */
  const counted = async (): Promise<{ client: pg.PoolClient; writes: () => number; reads: () => number }> => {
    const client = await pool.connect();
    const stream = (client as unknown as { connection: { stream: NodeJS.EventEmitter & { _writev?: (...a: unknown[]) => unknown; _write: (...a: unknown[]) => unknown } } })
      .connection.stream;
    let writes = 0;
    let reads = 0;
    const writev = stream._writev!.bind(stream);
    const write = stream._write.bind(stream);
    stream._writev = (...a: unknown[]) => {
      writes++;
      return writev(...a);
    };
    stream._write = (...a: unknown[]) => {
      writes++;
      return write(...a);
    };
    stream.on('data', () => reads++);
    return { client, writes: () => writes, reads: () => reads };
  };
  const rows = async (): Promise<number[]> => (await pool.query('SELECT a FROM t ORDER BY a')).rows.map((r: { a: number }) => r.a);
  const clear = (): Promise<unknown> => pool.query('DELETE FROM t');

  it('a statement and a deferred one commit in two writes to the socket: BEGIN with the first, the deferred with the COMMIT', async () => {
    await clear();
    const { client, writes } = await counted();
    try {
      const tx = new PipelinedTx(client);
      const inserted = await tx.query('INSERT INTO t (a) VALUES ($1)', [1]);
      assert.equal(inserted.rowCount, 1);
      assert.equal(writes(), 1, 'BEGIN went out with the statement');
      tx.deferred('INSERT INTO t (a) VALUES ($1)', [2]);
      assert.equal(writes(), 1, 'the deferred statement waits for the COMMIT');
      await tx.commit();
      assert.equal(writes(), 2);
    } finally {
      client.release();
    }
    assert.deepEqual(await rows(), [1, 2]);
  });

  it('a deferred statement with a reader goes out with the next statement, and its answer is read before that statement’s (the transaction id, PgOps.writing)', async () => {
    await clear();
    const { client, writes } = await counted();
    const order: string[] = [];
    try {
      const tx = new PipelinedTx(client);
      tx.deferred('SELECT txid_current() AS xid', undefined, (res) => order.push(`xid ${typeof (res.rows[0] as { xid: unknown }).xid}`));
      assert.equal(writes(), 0);
      const inserted = tx.query('INSERT INTO t (a) VALUES ($1)', [3]).then(() => order.push('insert'));
      assert.equal(writes(), 1, 'BEGIN, the deferred statement and the insert in one write');
      await inserted;
      assert.deepEqual(order, ['xid string', 'insert']);
      await tx.commit();
      assert.equal(writes(), 2);
    } finally {
      client.release();
    }
    assert.deepEqual(await rows(), [3]);
  });

  it('a deferred statement that fails fails the COMMIT, and nothing of the transaction is kept', async () => {
    await clear();
    await pool.query('INSERT INTO t (a) VALUES (7)');
    const client = await pool.connect();
    try {
      const tx = new PipelinedTx(client);
      await tx.query('INSERT INTO t (a) VALUES ($1)', [3]);
      tx.deferred('INSERT INTO t (a) VALUES ($1)', [7]);
      await assert.rejects(tx.commit(), { code: '23505' });
      await tx.rollback();
      // The connection is usable afterwards, outside any transaction.
      assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
      assert.equal(client.getTransactionStatus?.() ?? 'I', 'I');
    } finally {
      client.release();
    }
    assert.deepEqual(await rows(), [7]);
  });

  it('a COMMIT PostgreSQL answers with ROLLBACK (the transaction failed on its own) is an error, not a commit', async () => {
    await clear();
    const client = await pool.connect();
    try {
      const tx = new PipelinedTx(client);
      await tx.query('INSERT INTO t (a) VALUES ($1)', [4]);
      // A statement that failed while its caller went on (as a read by a malformed id did before): the transaction is aborted.
      await assert.rejects(tx.query('SELECT $1::uuid', ['not-a-uuid']), { code: '22P02' });
      await assert.rejects(tx.commit(), /COMMIT answered ROLLBACK/);
      await tx.rollback();
    } finally {
      client.release();
    }
    assert.deepEqual(await rows(), []);
  });

  it('a transaction that sent nothing sends nothing at all; a rollback drops deferred statements not sent', async () => {
    await clear();
    const { client, writes } = await counted();
    try {
      await new PipelinedTx(client).commit();
      assert.equal(writes(), 0);
      const tx = new PipelinedTx(client);
      await tx.query('INSERT INTO t (a) VALUES ($1)', [5]);
      tx.deferred('INSERT INTO t (a) VALUES ($1)', [6]);
      await tx.rollback();
      assert.equal(writes(), 2, 'BEGIN with the statement, then ROLLBACK; the deferred never went');
    } finally {
      client.release();
    }
    assert.deepEqual(await rows(), []);
  });

  it('through the store: a lock by an id that is not a UUID reads nothing and leaves the transaction whole (the writes after it commit)', async () => {
    const store = new PgStore({ connectionString: database.url, max: 2 });
    try {
      await store.migrate(compileModel(withPlatform(commerce)));
      await store.transaction(async (tx) => {
        assert.equal(await tx.lock('products', 'not-a-uuid', 'reference'), null);
        assert.equal(await tx.get('products', '{0190-0000}'), null);
        await tx.insert('products', productRow(1));
      });
      assert.equal((await store.get('products', rowId(1)))?.id, rowId(1));
      assert.equal(await store.get('products', rowId(1).toUpperCase()).then((r) => r?.id), rowId(1), 'any form PostgreSQL reads as a uuid still finds the record');
    } finally {
      await store.close();
    }
  });
});
