// client.events.stream (issue 28.7, DESIGN §9) as createClient wires it to openEventStream (src/stream.ts): the client's credential (an API key, a session's cookie from the jar) on the stream, `after` and `type` passed on, an abort ending it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, startServer, type Mode, type TestServer } from '../support/harness.js';
import { PG_URL } from '../support/pg.js';
import type { CanonClient } from '../../packages/client/dist/index.js';
import { canon, recordingFetch } from './support.js';

const { createClient } = canon;
const MODES: Mode[] = ['listen', ...(PG_URL ? (['listen/postgres'] as const) : [])];

for (const mode of MODES) {
  describe(`canon-client events.stream (${mode})`, () => {
    let server: TestServer;
    let admin: CanonClient;
    before(async () => {
      server = await startServer(mode);
      admin = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY });
    });
    after(async () => server.close());

    /**
     * The id of the event about `objectId` in `client`'s log, once it is there: PostgreSQL numbers events just after
     * their commit (docs/events.md), so the write's answer can come before its event is listed.
     */
    const eventOf = async (client: CanonClient, objectId: string): Promise<string> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        for await (const e of client.events.list({ limit: 100 })) if ((e.data.object as { id?: string }).id === objectId) return e.id;
        if (Date.now() > deadline) throw new Error(`no event about ${objectId} within 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    it('an API-key client streams the events written after `after`, of the `type` asked for, until its signal aborts', async () => {
      const before = await admin.products.create({ name: 'Before', price: { amount: 1, currency: 'EUR' } });
      const start = await eventOf(admin, before.id!);
      const made = await admin.products.create({ name: 'Streamed', price: { amount: 2, currency: 'EUR' } });
      await admin.users.create({ email: `streamed-${mode.replace('/', '-')}@example.com`, full_name: 'Not a product', password: 'long enough password' });
      const made2 = await admin.products.create({ name: 'Streamed 2', price: { amount: 3, currency: 'EUR' } });
      const recorder = recordingFetch();
      const c = createClient({ baseUrl: server.baseUrl!, apiKey: ADMIN_KEY, fetch: recorder.fetch, headers: { 'user-agent': 'events-test' } });
      const controller = new AbortController();
      const seen: string[] = [];
      for await (const event of c.events.stream({ after: start, type: 'product.*', signal: controller.signal })) {
        assert.equal(event.type, 'product.created');
        seen.push((event.data.object as { id: string }).id);
        if (seen.length === 2) controller.abort();
      }
      assert.deepEqual(seen, [made.id, made2.id]);
      const sent = recorder.sent[0]!;
      assert.equal(new URL(sent.url).pathname, '/events');
      assert.equal(new URL(sent.url).searchParams.get('after'), start);
      assert.equal(sent.headers['x-api-key'], ADMIN_KEY);
      assert.equal(sent.headers['user-agent'], 'events-test');
    });

    it('a session client streams with the cookie its jar holds (logging in first)', async () => {
      const email = `streamer-${mode.replace('/', '-')}@example.com`;
      await admin.users.create({ email, full_name: 'Streamer', password: 'long enough password' });
      const s = createClient({ baseUrl: server.baseUrl!, session: { email, password: 'long enough password' } });
      const mine = await s.orders.create({});
      const from = await eventOf(s, mine.id!);
      const next = await s.orders.create({});
      for await (const event of s.events.stream({ after: from, type: ['order.*'] })) {
        assert.equal((event.data.object as { id: string }).id, next.id);
        break;
      }
    });
  });
}
