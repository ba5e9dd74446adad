// OwnTransactions (src/store/postgres/own-transactions.ts): a snapshot moved by this process's transactions alone keeps what was kept; any other transaction that ended, or one learnt too late, empties it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnTransactions } from '../../../src/store/postgres/own-transactions.js';

describe('OwnTransactions.carries', () => {
  it('the same snapshot, or one moved by ours alone, carries; an id we never learnt does not', () => {
    const own = new OwnTransactions();
    own.own(100);
    own.own(101);
    assert.equal(own.carries('100:100:', '100:100:'), true, 'nothing ended');
    assert.equal(own.carries('100:100:', '102:102:'), true, '100 and 101 ended, both ours');
    assert.equal(own.carries('100:100:', '103:103:'), false, '102 ended and is not ours');
    assert.equal(own.carries('100:100:', '101:103:101,102'), true, '100 ended (ours); 101 and 102 are still running');
  });

  it('an id running in the first snapshot that ended by the second must be ours', () => {
    const own = new OwnTransactions();
    own.own(52);
    assert.equal(own.carries('50:53:50,52', '50:53:50'), true, '52 ended (ours), 50 still runs');
    assert.equal(own.carries('50:53:50,52', '53:53:'), false, '50 ended too, not ours');
  });

  it('an id that ended before it was learnt is not ours yet: the caches empty', () => {
    const own = new OwnTransactions();
    assert.equal(own.carries('7:7:', '8:8:'), false);
    own.own(7);
    assert.equal(own.carries('7:7:', '8:8:'), true, 'asked again once learnt (the memo keeps one pair: another pair first)');
  });

  it('a snapshot going back, an unreadable one, or a span too long to look through never carries', () => {
    const own = new OwnTransactions();
    for (let x = 10; x < 20; x++) own.own(x);
    assert.equal(own.carries('20:20:', '10:10:'), false, 'back in time');
    assert.equal(own.carries('10:10:', 'nonsense'), false);
    assert.equal(own.carries('', '10:10:'), false);
    assert.equal(own.carries('10:10:', '10:30000:'), false, 'more than the span looked through');
  });

  it('ids not safe as numbers are never learnt; past 4,096, ours below the latest snapshot’s xmin are forgotten', () => {
    const own = new OwnTransactions();
    own.own(Number.NaN);
    own.own(2 ** 60);
    assert.equal(own.carries(`${2 ** 60}:${2 ** 60}:`, `${2 ** 60 + 1}:${2 ** 60 + 1}:`), false);
    for (let x = 1; x <= 4_096; x++) own.own(x);
    assert.equal(own.carries('1:1:', '4097:4097:'), true);
    // 1…4,096 ended before 4097:4097 was taken: the next id learnt drops them, and a cache stamped before errs to emptying.
    own.own(4_097);
    assert.equal(own.carries('1:1:', '4098:4098:'), false);
    assert.equal(own.carries('4097:4097:', '4098:4098:'), true);
  });
});
