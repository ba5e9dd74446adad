// Issue 14.4: the lean read path serves only routes whose every hook it stands in for; a hook it does not know makes it decline, and Fastify (running the hook) answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createProduct, startServer, type TestServer } from '../../support/harness.js';

describe('the lean read path and hooks it does not know', () => {
  const servers: TestServer[] = [];
  after(async () => Promise.all(servers.map((s) => s.close())));

  describe('with only Canon’s own hooks', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer('listen');
      servers.push(server);
    });
    it('serves every object read and declines none', async () => {
      assert.deepEqual(server.app.fastReads.declined, {});
      const product = await createProduct(server);
      const before = server.app.fastReads.served;
      assert.equal((await server.request('GET', `/v2/products/${product.id}`)).status, 200);
      assert.equal(server.app.fastReads.served, before + 1);
    });
    it('serves POST /graphql on its lean path', async () => {
      assert.deepEqual(server.app.fastGraphql.declined, {});
      const before = server.app.fastGraphql.served;
      assert.equal((await server.request('POST', '/graphql', { body: { query: '{ __typename }' } })).status, 200);
      assert.equal(server.app.fastGraphql.served, before + 1);
    });
  });

  describe('with a global onRequest hook added by embedding code', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer('listen', {}, undefined, undefined, {
        configureHttp: (app) => {
          app.addHook('onRequest', async (_request, reply) => {
            reply.header('x-embedded', 'yes');
          });
        },
      });
      servers.push(server);
    });
    it('declines every object read, and Fastify answers with the hook run', async () => {
      assert.ok(Object.keys(server.app.fastReads.declined).includes('/v2/products/:id'), JSON.stringify(server.app.fastReads.declined));
      const product = await createProduct(server);
      const before = server.app.fastReads.served;
      const res = await server.request('GET', `/v2/products/${product.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-embedded'], 'yes');
      assert.equal(server.app.fastReads.served, before);
    });
    it('declines POST /graphql too (src/http/graphql/fast-graphql.ts), and Fastify answers with the hook run', async () => {
      assert.match(server.app.fastGraphql.declined['*'] ?? '', /unknown app hooks: onRequest/);
      const res = await server.request('POST', '/graphql', { body: { query: '{ __typename }' } });
      assert.deepEqual([res.status, res.headers['x-embedded'], res.body.data], [200, 'yes', { __typename: 'Query' }]);
      assert.equal(server.app.fastGraphql.served, 0);
    });
  });

  describe('with a plugin registered by embedding code that adds a preHandler', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer('listen', {}, undefined, undefined, {
        configureHttp: async (app) => {
          await app.register(async (child) => {
            child.addHook('preHandler', async (_request, reply) => {
              reply.header('x-child', 'yes');
            });
          });
        },
      });
      servers.push(server);
    });
    it('declines too: the lean path cannot tell which routes the plugin’s hook reaches', async () => {
      assert.ok(Object.keys(server.app.fastReads.declined).length > 0);
      const product = await createProduct(server);
      const before = server.app.fastReads.served;
      assert.equal((await server.request('GET', `/v2/products/${product.id}`)).status, 200);
      assert.equal(server.app.fastReads.served, before);
    });
  });
});
