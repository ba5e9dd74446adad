// The event feed as use cases without HTTP (src/services/event-feed.ts): pages and their cursors, a stream's start, what a caller may see, refusals; SQLite.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM, type Principal } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import { EventFeed, type FeedRequest } from '../../../src/services/event-feed.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';

const admin: Principal = { kind: 'api_key', credentialId: 'admin-key', userId: null, role: 'admin', scopes: [] };
const request = (over: Partial<FeedRequest> = {}): FeedRequest => ({ limit: 10, types: undefined, ...over });

describe('the event feed as use cases', () => {
  let core: Core;
  let feed: EventFeed;
  let customer: Principal;
  /** Sequences of the events the tests wrote, oldest first. */
  let written: number[];

  before(async () => {
    const config = resolveConfig({ databaseUrl: 'sqlite::memory:', seed: false, secret: 'event-feed', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
    core = await openCore(config, { appDef: commerce, logger: false });
    feed = new EventFeed(core.store, core.model, core.secret);
    const user = await core.services.create({ principal: SYSTEM }, 'users', { email: 'feed@example.com', full_name: 'Feed', password: 'a long passphrase' });
    customer = { kind: 'api_key', credentialId: 'customer-key', userId: user.record.id, role: 'customer', scopes: [] };
    for (let i = 0; i < 3; i++) await core.services.create({ principal: SYSTEM }, 'products', { name: `p${i}`, price: { amount: 100 + i, currency: 'EUR' } });
    await core.services.create({ principal: customer }, 'orders', {});
    written = (await core.store.listEvents(0, 1000)).map((e) => e.sequence);
  });
  after(async () => core.close());

  it('pages from the oldest kept event; the cursor holds the position after the page and is bound to the type filter', async () => {
    const first = await feed.page(admin, request({ limit: 2 }));
    assert.deepEqual(
      first.events.map((e) => e.sequence),
      written.slice(0, 2),
    );
    assert.equal(first.hasMore, true);
    assert.equal(feed.cursorPosition(first.nextCursor!, undefined), written[1]);
    // The same cursor under another type filter, or one that is not the feed's, names no position.
    assert.equal(feed.cursorPosition(first.nextCursor!, ['order.*']), undefined);
    assert.equal(feed.cursorPosition('forged', undefined), undefined);
    const rest = await feed.page(admin, request({ afterSequence: written[1]! }));
    assert.deepEqual(
      rest.events.map((e) => e.sequence),
      written.slice(2),
    );
    assert.equal(rest.hasMore, false);
    // With nothing more yet, the cursor still holds the position: polling with it returns only what comes next.
    assert.equal(feed.cursorPosition(rest.nextCursor!, undefined), written[written.length - 1]);
  });

  it('a page after an event id starts after that event; type patterns filter', async () => {
    const events = await core.store.listEvents(0, 1000);
    const page = await feed.page(admin, request({ afterId: events[0]!.id }));
    assert.deepEqual(
      page.events.map((e) => e.id),
      events.slice(1).map((e) => e.id),
    );
    const products = await feed.page(admin, request({ types: ['product.*'] }));
    assert.deepEqual(
      products.events.map((e) => e.type),
      ['product.created', 'product.created', 'product.created'],
    );
  });

  it('a customer sees its own events only; another’s event id is refused exactly as an unknown one, naming the parameter', async () => {
    const page = await feed.page(customer, request());
    assert.ok(page.events.length > 0);
    assert.ok(page.events.every((e) => e.owner_id === customer.userId));
    const product = (await core.store.listEvents(0, 1000)).find((e) => e.type === 'product.created')!;
    // Products are public objects but their events are the admin's: the customer's feed does not include them.
    for (const [afterId, field] of [
      [product.id, 'after'],
      ['00000000-0000-7000-8000-000000000000', 'Last-Event-ID'],
    ] as const) {
      await assert.rejects(feed.startStream(customer, request({ afterId }), field), {
        code: 'INVALID_PARAMETER',
        details: [{ field, message: 'is not the id of a kept event', value: afterId }],
      });
    }
  });

  it('a stream starts at the head without a position, after the named event with one, and replays the log with its filter', async () => {
    const head = await feed.startStream(admin, request(), 'after');
    assert.equal(head.after, written[written.length - 1]);
    const events = await core.store.listEvents(0, 1000);
    const resumed = await feed.startStream(admin, request({ afterId: events[1]!.id, types: ['product.*'] }), 'Last-Event-ID');
    assert.equal(resumed.after, events[1]!.sequence);
    assert.deepEqual(resumed.filter, { types: ['product.*'] });
    const replayed = await resumed.replay(resumed.after, 100, resumed.filter);
    assert.deepEqual(
      replayed.map((e) => e.id),
      events
        .slice(2)
        .filter((e) => e.type.startsWith('product.'))
        .map((e) => e.id),
    );
  });

  it('a credential whose scopes read no resource is 403 INSUFFICIENT_SCOPE for pages and streams alike', async () => {
    const metricsOnly: Principal = { ...admin, credentialId: 'metrics-key', scopes: ['metrics:read'] };
    await assert.rejects(feed.page(metricsOnly, request()), { code: 'INSUFFICIENT_SCOPE' });
    await assert.rejects(feed.startStream(metricsOnly, request(), 'after'), { code: 'INSUFFICIENT_SCOPE' });
    assert.deepEqual(feed.filterFor({ ...admin, scopes: ['products:read'] }, { types: undefined }), { resources: ['products'] });
  });
});
