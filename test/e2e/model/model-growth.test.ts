// Issue 14.2: the model describes what generators need: actions with typed input and their own success status, typed object fields, descriptions and examples, all visible in the catalog and enforced over HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { startServer, type TestServer } from '../../support/harness.js';

const permissions = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
const people = defineResource({
  name: 'people',
  singular: 'person',
  fields: { email: f.email({ required: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }) },
  permissions,
});
const notes = defineResource({
  name: 'notes',
  singular: 'note',
  description: 'Short notes with a colour.',
  examples: [{ title: 'Buy tea', meta: { color: 'red', weight: 1 } }],
  fields: {
    title: f.string({ required: true, maxLength: 100, description: 'What the note says.', examples: ['Buy tea'] }),
    meta: f.object({ properties: { color: f.enum(['red', 'blue'], { required: true }), weight: f.integer({ minimum: 0 }) } }),
    archived_reason: f.string({ readOnly: true }),
  },
  permissions,
  actions: {
    archive: {
      method: 'POST',
      allow: ['admin'],
      description: 'Archives the note; the archiving is accepted and completes later.',
      input: { reason: f.string({ required: true, maxLength: 50 }) },
      status: 202,
      run: (_record, _ctx, input) => ({ archived_reason: input.reason }),
    },
  },
});
const app = defineApp({ resources: [people, notes], users: 'people' });

describe('what the model describes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('inject', {}, app);
  });
  after(async () => server?.close());

  it('typed object fields: a valid object round-trips, anything else is 422 naming the property', async () => {
    const ok = await server.request('POST', '/v2/notes', { body: { title: 'a', meta: { color: 'red', weight: 2 } } });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.meta, { color: 'red', weight: 2 });
    for (const [meta, field] of [
      [{ color: 'green' }, 'meta.color'],
      [{ weight: 1 }, 'meta.color'],
      [{ color: 'red', extra: 1 }, 'meta.extra'],
      [{ color: 'red', weight: -1 }, 'meta.weight'],
    ] as const) {
      const bad = await server.request('POST', '/v2/notes', { body: { title: 'a', meta } });
      assert.equal(bad.status, 422, JSON.stringify(meta));
      assert.ok(
        bad.body.error.details.some((d: { field: string }) => d.field === field),
        `${field} in ${JSON.stringify(bad.body.error.details)}`,
      );
    }
  });

  it('an action with declared input validates it, hands it to run, and answers with its own status', async () => {
    const note = (await server.request('POST', '/v2/notes', { body: { title: 'b' } })).body;
    const missing = await server.request('POST', `/v2/notes/${note.id}/archive`, { body: {} });
    assert.equal(missing.status, 422);
    assert.equal(missing.body.error.details[0].field, 'reason');
    const tooLong = await server.request('POST', `/v2/notes/${note.id}/archive`, { body: { reason: 'x'.repeat(51) } });
    assert.equal(tooLong.status, 422);
    const done = await server.request('POST', `/v2/notes/${note.id}/archive`, { body: { reason: 'done with it' } });
    assert.equal(done.status, 202, done.text);
    assert.equal(done.body.archived_reason, 'done with it');
  });

  it('the catalog carries descriptions, examples, the action’s input and its status', () => {
    const catalog = server.runtime.catalog;
    const archive = catalog.get('v2.notes.archive')!;
    assert.equal(archive.description, 'Archives the note; the archiving is accepted and completes later.');
    assert.deepEqual(Object.keys(archive.output), ['202']);
    assert.deepEqual((archive.input.body!['application/json'] as { required: string[] }).required, ['reason']);
    const read = catalog.get('v2.notes.read')!.output[200] as {
      description: string;
      examples: unknown[];
      properties: Record<string, { description?: string; examples?: unknown[] }>;
    };
    assert.equal(read.description, 'Short notes with a colour.');
    assert.deepEqual(read.examples, [{ title: 'Buy tea', meta: { color: 'red', weight: 1 } }]);
    assert.equal(read.properties.title!.description, 'What the note says.');
    assert.deepEqual(read.properties.title!.examples, ['Buy tea']);
    assert.match(catalog.get('v2.notes.list')!.description, /Short notes with a colour\./);
  });
});
