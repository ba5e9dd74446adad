// The PostgreSQL epoch reader's last read (src/store/postgres/epoch-reader.ts): it vouches for a request only when it was sent after the request arrived, and reads are shared by the callers of a moment.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type pg from 'pg';
import { EpochReader } from '../../../src/store/postgres/epoch-reader.js';

/** A pool answering the epoch query with the next snapshot of `snapshots`, counting the queries sent. */
function fakePool(snapshots: string[]): { pool: pg.Pool; sent: () => number } {
  let sent = 0;
  const pool = {
    query: async () => {
      const snapshot = snapshots[Math.min(sent, snapshots.length - 1)]!;
      sent++;
      await new Promise((resolve) => setTimeout(resolve, 2));
      return { rows: [{ epoch: '7', snapshot }] };
    },
  };
  return { pool: pool as unknown as pg.Pool, sent: () => sent };
}

/** A dedicated connection that never connects: every read goes through the pool. */
function unreachable(): pg.Client {
  const client = { on: () => client, connect: () => Promise.reject(new Error('unreachable')), end: () => Promise.resolve() };
  return client as unknown as pg.Client;
}

describe('EpochReader.readSince and latest', () => {
  it('nothing before the first read; a read vouches for requests that arrived before it was sent, not after', async () => {
    const { pool, sent } = fakePool(['10:12:', '10:13:']);
    const reader = new EpochReader(unreachable, pool);
    const arrived = performance.now();
    assert.equal(reader.readSince(arrived), undefined);
    assert.equal(reader.latest, undefined);
    assert.equal(await reader.current(), 7);
    assert.deepEqual(reader.readSince(arrived), { epoch: 7, snapshot: '10:12:' });
    assert.deepEqual(reader.latest, { epoch: 7, snapshot: '10:12:' });
    const later = performance.now();
    assert.equal(reader.readSince(later), undefined, 'sent before this request arrived: it cannot vouch for it');
    assert.equal(await reader.snapshot(), '10:13:');
    assert.equal(reader.readSince(later)?.snapshot, '10:13:');
    assert.equal(sent(), 2);
    await reader.close();
  });

  it('callers of one moment share one read, and each caller waits for a read sent after its call', async () => {
    const { pool, sent } = fakePool(['1:1:', '1:2:', '1:3:']);
    const reader = new EpochReader(unreachable, pool);
    const first = reader.snapshot();
    // Arrives while the first read is on the wire: it waits for the next one.
    const arrived = performance.now();
    const [a, b, c] = await Promise.all([first, reader.snapshot(), reader.snapshot()]);
    assert.equal(a, '1:1:');
    assert.equal(b, '1:2:');
    assert.equal(c, '1:2:');
    assert.equal(sent(), 2);
    assert.equal(reader.readSince(arrived)?.snapshot, '1:2:');
    await reader.close();
  });
});
