// keepTickObjectShape keeps one process.nextTick record alive (src/runtime/tick-shape.ts explains why).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keepTickObjectShape, keptTickObject } from '../../../src/runtime/tick-shape.js';

const nextTick = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

describe('keepTickObjectShape', () => {
  it('keeps the record Node built for a nextTick callback, and only the first', async () => {
    keepTickObjectShape();
    await nextTick(); // ticks run in order: the keeper's has run
    const kept = keptTickObject() as { callback?: unknown } | undefined;
    assert.ok(kept !== undefined, 'a record is kept');
    assert.equal(typeof kept.callback, 'function', 'the record of a nextTick callback');
    // The shape the fix is about: Node's literal with the async id and trigger id under symbol keys (Node 24 adds a third).
    const symbols = Object.getOwnPropertySymbols(kept).map((s) => s.description);
    for (const key of ['async_id_symbol', 'trigger_async_id_symbol']) assert.ok(symbols.includes(key), `a nextTick record has ${key}, got ${symbols.join(', ')}`);
    keepTickObjectShape();
    await nextTick();
    assert.equal(keptTickObject(), kept, 'later calls keep the first record');
  });
});
