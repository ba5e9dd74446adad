// Issue 27.2: every event type an app can emit is in the event catalog, hook-written ones included: declared types are listed (the OpenAPI webhooks) and written; an undeclared one is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { eventually } from '../../support/eventually.js';
import { errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';

const permissions = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
const people = defineResource({
  name: 'people',
  singular: 'person',
  fields: { email: f.email({ required: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }) },
  permissions,
});
/** A box is sealed by its own hook as it is made, under the event type it declares. */
const boxes = defineResource({
  name: 'boxes',
  singular: 'box',
  fields: { label: f.string({ required: true }), sealed: f.boolean({ default: false }) },
  permissions,
  eventTypes: { 'box.sealed': 'A box was sealed by the packing line.' },
  hooks: {
    async afterWrite(record, kind, ctx) {
      if (kind === 'created') await ctx.services.update('boxes', record.id, { sealed: true }, 'box.sealed');
    },
  },
});
/** A crate's hook writes under a type nobody declared: the catalog would not list it, so the write is refused. */
const crates = defineResource({
  name: 'crates',
  singular: 'crate',
  fields: { label: f.string({ required: true }), smashed: f.boolean({ default: false }) },
  permissions,
  hooks: {
    async afterWrite(record, kind, ctx) {
      if (kind === 'created') await ctx.services.update('crates', record.id, { smashed: true }, 'crate.smashed');
    },
  },
});
const app = defineApp({ resources: [people, boxes, crates], users: 'people' });

for (const mode of MODES) {
  describe(`declared event types (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, {}, app);
    });
    after(async () => server?.close());

    it('a declared type is in the OpenAPI webhooks with its description, and a hook writes it as an event of the feed', async () => {
      const doc = await server.request('GET', '/v2/openapi.json');
      assert.equal(doc.status, 200);
      const webhooks = (doc.body as { webhooks: Record<string, { post: { description: string } }> }).webhooks;
      assert.match(webhooks['box.sealed']!.post.description, /^A box was sealed by the packing line\./);
      assert.equal('crate.smashed' in webhooks, false);
      const made = await server.request('POST', '/v2/boxes', { body: { label: 'tea' } });
      assert.equal(made.status, 201, made.text);
      // The harness checks every event of the feed against the catalog (test/support/conformance.ts).
      // On PostgreSQL an event is readable once its commit is stamped (docs/events.md): wait for it.
      type Event = { type: string; data: { object: { id: string; sealed: boolean } }; previous_attributes?: { sealed?: boolean } };
      const events = await eventually(async () => {
        const sealed = await server.request('GET', '/events?type=box.sealed');
        assert.equal(sealed.status, 200, sealed.text);
        const data = (sealed.body as { data: Event[] }).data;
        return data.length > 0 ? data : undefined;
      }, 'the box.sealed event');
      assert.equal(events.length, 1);
      assert.equal(events[0]!.data.object.id, (made.body as { id: string }).id);
      assert.equal(events[0]!.data.object.sealed, true);
      assert.equal(events[0]!.previous_attributes?.sealed, false);
    });

    it('a hook writing under an undeclared type fails the request (500) and writes nothing', async () => {
      const res = await server.request('POST', '/v2/crates', { body: { label: 'glass' } });
      assert.equal(res.status, 500, res.text);
      assert.equal(errorShape(res).code, 'INTERNAL_ERROR');
      const list = await server.request('GET', '/v2/crates');
      assert.equal(list.status, 200);
      assert.deepEqual((list.body as { data: unknown[] }).data, []);
      const events = await server.request('GET', '/events?type=crate.created');
      assert.equal(events.status, 200);
      assert.deepEqual((events.body as { data: unknown[] }).data, []);
    });
  });
}
