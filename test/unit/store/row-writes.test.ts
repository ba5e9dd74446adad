// RowWrites (src/store/postgres/row-writes.ts): a record read by id is kept only if no transaction of ours was writing its row when the read was sent, or wrote it since.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RowWrites, TxWrites } from '../../../src/store/postgres/row-writes.js';

describe('RowWrites.keepable', () => {
  it('a read sent before a write of its row began, and answered after it ended, is not kept; rows not written are', () => {
    const rows = new RowWrites();
    const sent = rows.now();
    rows.writing(['products/a']);
    assert.equal(rows.keepable('products/a', sent), false, 'open');
    assert.equal(rows.keepable('products/b', sent), true, 'another row');
    rows.end(['products/a']);
    assert.equal(rows.keepable('products/a', sent), false, 'ended after the read was sent: the read may show the row before it');
    assert.equal(rows.keepable('products/a', rows.now()), true, 'a read sent after it ended sees it');
    assert.equal(rows.keepable('products/b', sent), true);
  });

  it('two transactions writing one row: open until both end', () => {
    const rows = new RowWrites();
    rows.writing(['products/a']);
    rows.writing(['products/a']);
    rows.end(['products/a']);
    assert.equal(rows.keepable('products/a', rows.now()), false, 'one still open');
    rows.end(['products/a']);
    assert.equal(rows.keepable('products/a', rows.now()), true);
  });

  it('past the rows it remembers, every read sent before is refused', () => {
    const rows = new RowWrites();
    const sent = rows.now();
    const many = Array.from({ length: 10_001 }, (_, i) => `products/${i}`);
    rows.writing(many);
    rows.end(many);
    assert.equal(rows.keepable('products/never-written', sent), false, 'forgotten history: refused');
    assert.equal(rows.keepable('products/never-written', rows.now()), true);
  });
});

describe('TxWrites', () => {
  it('forgets each row as it is written and again at the end, passes the id on, and marks the rows open until then', () => {
    const rows = new RowWrites();
    const forgotten: string[] = [];
    const ids: number[] = [];
    const watch = new TxWrites(
      rows,
      (xid) => ids.push(xid),
      (resource, id) => forgotten.push(`${resource}/${id}`),
    );
    const sent = rows.now();
    watch.xid(42);
    watch.writing('products', ['a', 'b']);
    assert.deepEqual(forgotten, ['products/a', 'products/b']);
    assert.deepEqual(ids, [42]);
    assert.equal(rows.keepable('products/a', rows.now()), false);
    watch.end();
    assert.deepEqual(forgotten, ['products/a', 'products/b', 'products/a', 'products/b']);
    assert.equal(rows.keepable('products/b', sent), false);
    assert.equal(rows.keepable('products/b', rows.now()), true);
  });
});
