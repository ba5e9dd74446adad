// The stream guard: decides a stream again only when the credentials epoch moved, never lets an older decision land last, closes a stream left with nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamGuard } from '../../../src/events/stream-guard.js';
import { EventStream, type StreamSink } from '../../../src/events/stream.js';
import type { ApiVersion } from '../../../src/model/versions.js';
import type { EventFilter, StoredEvent } from '../../../src/store/types.js';

const VERSION = { name: 'v2', date: '2026-03-01' } as unknown as ApiVersion;

function sink(): StreamSink & { text: string; ended: boolean } {
  const s = {
    text: '',
    ended: false,
    write(chunk: string) {
      s.text += chunk;
      return true;
    },
    buffered: () => 0,
    end() {
      s.ended = true;
    },
    destroy() {},
  };
  return s;
}

function event(sequence: number, resource: string): StoredEvent {
  return {
    id: `e${sequence}`,
    type: `${resource}.created`,
    sequence,
    created_at: '2026-01-01T00:00:00.000Z',
    api_version: '2026-03-01',
    resource,
    object_id: `o${sequence}`,
    owner_id: null,
    data: { object: { id: `o${sequence}` } },
    previous_attributes: null,
  } as unknown as StoredEvent;
}

/** A stream whose reauthorization answers from `answers`, in order, each after its own delay. */
function streamWith(answers: Array<{ filter: EventFilter | null; delayMs: number }>) {
  const out = sink();
  let calls = 0;
  const stream = new EventStream(out, {
    version: VERSION,
    filter: {},
    maxBufferBytes: 1 << 20,
    reauthorize: async () => {
      const a = answers[Math.min(calls++, answers.length - 1)]!;
      await new Promise((r) => setTimeout(r, a.delayMs));
      return a.filter;
    },
  });
  return { stream, out, calls: () => calls };
}

describe('StreamGuard', () => {
  it('decides a stream once per epoch, again when the epoch moves', async () => {
    let epoch = 1;
    const { stream, calls } = streamWith([{ filter: {}, delayMs: 0 }]);
    const guard = new StreamGuard({ all: () => [stream] }, () => epoch, 60_000);
    await guard.current();
    await guard.current();
    assert.equal(calls(), 1);
    assert.equal(stream.decidedAt, 1);
    epoch = 2;
    await guard.current();
    assert.equal(calls(), 2);
    assert.equal(stream.decidedAt, 2);
  });

  it('runs one stream’s decisions in order: a slow decision at an old epoch never overwrites a newer one', async () => {
    let epoch = 1;
    // The first (old) decision answers slowly and still allows orders; the second (new) one answers at once with products only.
    const { stream, out } = streamWith([
      { filter: {}, delayMs: 50 },
      { filter: { resources: ['products'] }, delayMs: 0 },
    ]);
    const guard = new StreamGuard({ all: () => [stream] }, () => epoch, 60_000);
    const first = guard.current();
    epoch = 2;
    await Promise.all([first, guard.current()]);
    assert.equal(stream.decidedAt, 2);
    stream.send([event(1, 'orders'), event(2, 'products')]);
    assert.doesNotMatch(out.text, /orders\.created/);
    assert.match(out.text, /products\.created/);
  });

  it('closes a stream whose credential no longer authenticates, or whose scopes read nothing', async () => {
    for (const filter of [null, { resources: [] }] as const) {
      const { stream, out } = streamWith([{ filter, delayMs: 0 }]);
      const guard = new StreamGuard({ all: () => [stream] }, () => 7, 60_000);
      await guard.current();
      assert.equal(stream.closed, true);
      assert.equal(out.ended, true);
    }
  });

  it('decides every stream again once the full period has passed, even with no epoch change', async () => {
    let now = 0;
    const { stream, calls } = streamWith([{ filter: {}, delayMs: 0 }]);
    const guard = new StreamGuard(
      { all: () => [stream] },
      () => 1,
      1000,
      () => now,
    );
    await guard.current();
    await guard.current();
    assert.equal(calls(), 1);
    now = 1000;
    await guard.current();
    assert.equal(calls(), 2);
  });

  it('with no stream open reads no epoch: the hub’s tick costs an idle server nothing', async () => {
    let reads = 0;
    const streams: EventStream[] = [];
    const guard = new StreamGuard({ all: () => streams }, () => ++reads, 60_000);
    await guard.tick();
    await guard.current();
    assert.equal(reads, 0);
    streams.push(streamWith([{ filter: {}, delayMs: 0 }]).stream);
    await guard.tick();
    assert.equal(reads, 1, 'a stream open: the epoch is read');
  });
});
