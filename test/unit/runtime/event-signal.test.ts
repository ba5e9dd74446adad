// EventSignal: a commit wakes this process's followers once, other processes through the fan-out, and never twice by its own echo.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFanOut } from '../../../src/fanout/memory-fanout.js';
import { EVENTS_CHANNEL, EventSignal } from '../../../src/runtime/event-signal.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('EventSignal', () => {
  it('a commit of this process wakes its followers once, though the fan-out echoes it back', async () => {
    const fanout = new MemoryFanOut();
    const store = new SqliteStore({ path: ':memory:' });
    const signal = new EventSignal(fanout, store);
    signal.start(() => undefined);
    await settle();
    let wakes = 0;
    let committed = 0;
    signal.on(() => wakes++);
    signal.onCommitted(() => committed++);
    signal.committed();
    await settle();
    assert.equal(wakes, 1);
    assert.equal(committed, 1);
    await signal.close();
    await store.close();
  });

  it('another process’s publication wakes the followers here, and is no commit of this process', async () => {
    const fanout = new MemoryFanOut();
    const store = new SqliteStore({ path: ':memory:' });
    const here = new EventSignal(fanout, store);
    const there = new EventSignal(fanout, store);
    here.start(() => undefined);
    there.start(() => undefined);
    await settle();
    let wakes = 0;
    let committed = 0;
    here.on(() => wakes++);
    here.onCommitted(() => committed++);
    there.committed();
    // An earlier build publishes an empty message: still a wake-up.
    await fanout.publish(EVENTS_CHANNEL, '');
    await settle();
    assert.equal(wakes, 2);
    assert.equal(committed, 0);
    await here.close();
    await there.close();
    await store.close();
  });
});
