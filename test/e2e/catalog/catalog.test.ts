// Issue 14.1: the operation catalog is the only source of routes: Fastify serves exactly its operations, Allow and the lean read path follow it, and its output schemas describe real responses.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { buildCatalog } from '../../../src/catalog/catalog.js';
import { compileModel } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { ERROR_SCHEMA } from '../../../src/model/output-schema.js';
import { ERROR_CATALOG } from '../../../src/errors/catalog.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { createProduct, startServer, type TestServer } from '../../support/harness.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv, formats: string[]) => Ajv;

describe('the operation catalog', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen');
  });
  after(async () => server?.close());

  it('Fastify serves exactly the catalog’s operations (and the HEAD it adds to each GET), nothing else', () => {
    const served = server.app.servedRoutes.map((r) => `${r.method} ${r.url}`).sort();
    const declared = server.runtime.catalog.operations.flatMap((op) => (op.method === 'GET' ? [`GET ${op.path}`, `HEAD ${op.path}`] : [`${op.method} ${op.path}`])).sort();
    assert.deepEqual(served, declared);
  });

  it('every operation has a unique id, a description, grants or an authentication of none, and known error codes', () => {
    const ops = server.runtime.catalog.operations;
    assert.equal(new Set(ops.map((op) => op.id)).size, ops.length);
    for (const op of ops) {
      assert.ok(op.description.length > 10, op.id);
      for (const code of op.errors) assert.ok(code in ERROR_CATALOG, `${op.id}: ${code}`);
      if (op.authentication === 'required') assert.ok(op.grants.length > 0, op.id);
      assert.ok(Object.keys(op.output).length > 0, op.id);
    }
  });

  it('derives every resource operation from the model: CRUD, actions, nested collections', () => {
    const ids = new Set(server.runtime.catalog.operations.map((op) => op.id));
    for (const id of [
      'v2.products.list',
      'v2.products.create',
      'v2.products.read',
      'v2.products.replace',
      'v2.products.update',
      'v2.products.delete',
      'v2.orders.cancel',
      'v2.orders.tracking',
      'v2.orders.order-items.list',
      'v2.orders.order-items.create',
      'v2.sessions.create',
      'oauth.token',
      'health.ready',
    ]) {
      assert.ok(ids.has(id), id);
    }
    assert.ok(![...ids].some((id) => id.includes('.sessions.list')), 'internal resources have no routes');
    // Another app's model gives its own operations.
    const notes = defineResource({
      name: 'notes',
      singular: 'note',
      fields: { title: f.string({ required: true }) },
      permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    });
    const users = defineResource({
      name: 'people',
      singular: 'person',
      fields: { email: f.email({ required: true, unique: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }) },
      permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    });
    const other = buildCatalog(compileModel(withPlatform(defineApp({ resources: [users, notes], users: 'people' }))));
    assert.ok(other.get('v2.notes.update'));
    assert.ok(other.get('v2.people.password.replace'));
    assert.equal(other.get('v2.products.list'), undefined);
  });

  it('OPTIONS and 405 answer with the methods the catalog declares for the path', async () => {
    const catalog = server.runtime.catalog;
    const byPath = new Map<string, Set<string>>();
    for (const op of catalog.operations) byPath.set(op.path, (byPath.get(op.path) ?? new Set()).add(op.method));
    for (const [path, methods] of byPath) {
      const concrete = path.replace(/:id/g, '0190f3f0-0000-7000-8000-000000000001');
      const res = await server.request('OPTIONS', concrete);
      const expected = new Set([...methods, 'OPTIONS', ...(methods.has('GET') ? ['HEAD'] : [])]);
      assert.equal(res.headers.allow, [...expected].sort().join(', '), path);
    }
  });

  it('the lean read path takes exactly the catalog’s object reads', async () => {
    const product = await createProduct(server);
    const before = server.app.fastReads.served;
    assert.equal((await server.request('GET', `/v2/products/${product.id}`)).status, 200);
    assert.equal(server.app.fastReads.served, before + 1);
    const reads = server.runtime.catalog.operations.filter((op) => op.kind === 'read');
    // One read per resource in every version served.
    assert.deepEqual(
      reads.map((op) => `${op.version} ${op.resource}`).sort(),
      server.runtime.model.versions.flatMap((v) => [...server.runtime.model.resources.values()].filter((r) => !r.def.internal).map((r) => `${v.name} ${r.name}`)).sort(),
    );
  });

  it('the output schemas describe real responses: an object, a list, an error', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv, ['uuid', 'date-time', 'email']);
    const catalog = server.runtime.catalog;
    const product = await createProduct(server, { tags: ['x'] });
    const read = await server.request('GET', `/v2/products/${product.id}`);
    const list = await server.request('GET', '/v2/products?limit=2');
    const offset = await server.request('GET', '/v2/products?offset=0&limit=2');
    const missing = await server.request('GET', '/v2/products/0190f3f0-0000-7000-8000-000000000009');
    for (const [schema, body, what] of [
      [catalog.get('v2.products.read')!.output[200], read.body, 'object'],
      [catalog.get('v2.products.list')!.output[200], list.body, 'cursor list'],
      [catalog.get('v2.products.list')!.output[200], offset.body, 'offset list'],
      [catalog.get('v2.products.create')!.output[201], product, 'created'],
      [ERROR_SCHEMA, missing.body, 'error'],
    ] as const) {
      const validate = ajv.compile(schema!);
      assert.ok(validate(body), `${what}: ${JSON.stringify(validate.errors)}`);
    }
  });
});
