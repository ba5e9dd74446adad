// GET /events' query in REST's names parsed into the feed's request (src/http/routes/event-query.ts): every bad parameter named, in order, in one 400.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { feedRequestOf } from '../../../src/http/routes/event-query.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { EventFeed } from '../../../src/services/event-feed.js';
import type { Store } from '../../../src/store/types.js';

const SECRET = 'event-query';
/** Parsing reads nothing: a log that fails if it is read. */
const unread = new Proxy({} as Store, {
  get: () => () => {
    throw new Error('parsing must not read the log');
  },
});
const feed = new EventFeed(unread, compileModel(withPlatform(commerce)), SECRET);

/** A cursor of the feed at `sequence` for `types`, as a page hands it out. */
async function cursorAt(sequence: number, types: string[] | undefined): Promise<string> {
  const log = { findEvent: async () => null, lastEventSequence: async () => sequence, listEvents: async () => [], sequenceEvents: async () => 0 };
  const page = await new EventFeed(log, compileModel(withPlatform(commerce)), SECRET).page(
    { kind: 'api_key', credentialId: 'k', userId: null, role: 'admin', scopes: [] },
    { afterSequence: sequence, limit: 1, types },
  );
  return page.nextCursor!;
}

describe('the /events query', () => {
  it('defaults: 20 events of every type from the oldest', () => {
    assert.deepEqual(feedRequestOf(feed, {}), { limit: 20, types: undefined });
  });

  it('after names an event; Last-Event-ID takes its place on a stream', () => {
    assert.deepEqual(feedRequestOf(feed, { after: 'e1', limit: '5', type: 'order.*,product.created' }), { limit: 5, types: ['order.*', 'product.created'], afterId: 'e1' });
    assert.deepEqual(feedRequestOf(feed, { after: 'e1' }, 'e2'), { limit: 20, types: undefined, afterId: 'e2' });
  });

  it('a cursor of the feed gives its position, for the same type filter only', async () => {
    const cursor = await cursorAt(42, ['order.*']);
    assert.deepEqual(feedRequestOf(feed, { cursor, type: 'order.*' }), { limit: 20, types: ['order.*'], afterSequence: 42 });
    assert.throws(() => feedRequestOf(feed, { cursor }), {
      code: 'INVALID_QUERY',
      details: [{ field: 'cursor', message: 'is not a cursor of this event list (forged, or made with another type filter)' }],
    });
  });

  it('every bad parameter is named in one 400 INVALID_QUERY, in the order the checks run', () => {
    assert.throws(() => feedRequestOf(feed, { sort: 'x', after: ['a', 'b'], limit: '0', type: 'Order.*', cursor: 'c' }), {
      code: 'INVALID_QUERY',
      message: 'The query parameters of /events are not valid.',
      details: [
        { field: 'sort', message: 'is not a parameter of /events (after, cursor, limit, type)' },
        { field: 'after', message: 'is given more than once' },
        { field: 'limit', message: 'must be an integer from 1 to 100', value: '0' },
        { field: 'type', message: 'must be a comma list of at most 20 event types, * matching any characters (order.*)', value: 'Order.*' },
        { field: 'cursor', message: 'is not a cursor of this event list (forged, or made with another type filter)' },
      ],
    });
    assert.throws(() => feedRequestOf(feed, { after: 'e1', cursor: 'c' }), { details: [{ field: 'cursor', message: 'cannot be combined with after' }] });
    assert.throws(() => feedRequestOf(feed, { type: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') }), { code: 'INVALID_QUERY' });
  });
});
