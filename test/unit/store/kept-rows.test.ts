// KeptRows (SQLite's list rows by rowid): bounded, forgotten by the id a write names, one rowid per id, emptied by a new stamp.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeptRows } from '../../../src/store/sqlite/kept-rows.js';
import { productRow } from '../../support/list-rows.js';

describe('KeptRows', () => {
  it('answers a rowid with the record kept for it, frozen, per resource', () => {
    const kept = new KeptRows(10);
    kept.validate(1);
    const a = kept.set('products', 7, productRow(1));
    assert.equal(kept.get('products', 7), a);
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a.price));
    assert.equal(kept.get('orders', 7), undefined, 'another resource’s rowid 7 is another row');
    assert.equal(kept.get('products', 8), undefined);
  });

  it('forgets a row by its id, and only that row', () => {
    const kept = new KeptRows(10);
    kept.validate(1);
    kept.set('products', 1, productRow(1));
    const b = kept.set('products', 2, productRow(2));
    kept.forget('products', productRow(1).id);
    assert.equal(kept.get('products', 1), undefined);
    assert.equal(kept.get('products', 2), b);
    assert.equal(kept.count, 1);
    kept.forget('products', productRow(1).id);
    kept.forget('orders', productRow(2).id);
    assert.equal(kept.count, 1, 'forgetting what is not kept changes nothing');
  });

  it('holds one rowid per id: an id kept again at another rowid drops the first', () => {
    const kept = new KeptRows(10);
    kept.validate(1);
    kept.set('products', 1, productRow(1));
    const again = kept.set('products', 5, productRow(1, { version: 2 }));
    assert.equal(kept.get('products', 1), undefined);
    assert.equal(kept.get('products', 5), again);
    assert.equal(kept.count, 1);
    kept.forget('products', productRow(1).id);
    assert.equal(kept.count, 0);
  });

  it('a row set again at its rowid replaces the record without growing', () => {
    const kept = new KeptRows(10);
    kept.validate(1);
    kept.set('products', 1, productRow(1));
    const newer = kept.set('products', 1, productRow(1, { version: 3 }));
    assert.equal(kept.get('products', 1), newer);
    assert.equal(kept.count, 1);
  });

  it('is bounded: when full, the oldest row of the resource makes room, else another resource’s', () => {
    const kept = new KeptRows(3);
    kept.validate(1);
    for (let i = 1; i <= 3; i++) kept.set('products', i, productRow(i));
    kept.set('products', 4, productRow(4));
    assert.equal(kept.count, 3);
    assert.equal(kept.get('products', 1), undefined, 'the oldest went');
    assert.ok(kept.get('products', 4));
    kept.set('orders', 1, productRow(10));
    assert.equal(kept.count, 3);
    assert.equal(kept.get('products', 2), undefined, 'orders had none: the oldest product went');
    assert.ok(kept.get('orders', 1));
  });

  it('a new stamp empties it; the same stamp keeps it', () => {
    const kept = new KeptRows(10);
    kept.validate(1);
    const a = kept.set('products', 1, productRow(1));
    kept.validate(1);
    assert.equal(kept.get('products', 1), a);
    kept.validate(2);
    assert.equal(kept.get('products', 1), undefined);
    assert.equal(kept.count, 0);
  });
});
