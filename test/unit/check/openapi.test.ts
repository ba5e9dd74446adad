// Collection discovery from OpenAPI documents (src/check/openapi.ts): server prefixes, item paths, pagination parameters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectionPaths } from '../../../src/check/openapi.js';

const get = (parameters: unknown[] = []): unknown => ({ get: { parameters, responses: {} } });

describe('check: collections from an OpenAPI document', () => {
  it('takes GET paths with an item path under them or a pagination parameter, with the server prefix', () => {
    const doc = {
      openapi: '3.1.0',
      servers: [{ url: '/v2' }],
      paths: {
        '/products': get(),
        '/products/{id}': get(),
        '/events': get([{ name: 'cursor', in: 'query' }]),
        '/healthz': get(),
        '/users/{id}/orders': get([{ name: 'limit', in: 'query' }]),
        '/sessions': { post: {} },
      },
    };
    assert.deepEqual(collectionPaths(doc, new URL('http://h/v2/openapi.json')), [
      { path: '/v2/products', idField: 'id', createRequired: undefined },
      { path: '/v2/events', idField: undefined, createRequired: undefined },
    ]);
  });

  it('reads Swagger 2 basePath and absolute server URLs; ignores templated servers and non-documents', () => {
    assert.deepEqual(collectionPaths({ swagger: '2.0', basePath: '/api/', paths: { '/a': get(), '/a/{rid}': get() } }, new URL('http://h/x')), [
      { path: '/api/a', idField: 'rid', createRequired: undefined },
    ]);
    assert.deepEqual(collectionPaths({ openapi: '3.0.0', servers: [{ url: 'https://h/base' }], paths: { '/a': get([{ name: 'page', in: 'query' }]) } }, new URL('http://h/')), [
      { path: '/base/a', idField: undefined, createRequired: undefined },
    ]);
    assert.deepEqual(collectionPaths({ openapi: '3.0.0', servers: [{ url: '{scheme}://h' }], paths: { '/a': get([{ name: 'offset', in: 'query' }]) } }, new URL('http://h/')), [
      { path: '/a', idField: undefined, createRequired: undefined },
    ]);
    assert.deepEqual(collectionPaths({ nope: true }, new URL('http://h/')), []);
  });

  it('reads the fields a create body requires, through a local $ref', () => {
    const doc = {
      openapi: '3.0.3',
      components: { schemas: { ProductInput: { type: 'object', required: ['id', 'version'] } } },
      paths: {
        '/products/': { ...(get() as object), post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/ProductInput' } } } } } },
        '/products/{rid}': get(),
      },
    };
    assert.deepEqual(collectionPaths(doc, new URL('http://h/documentation/json')), [{ path: '/products/', idField: 'rid', createRequired: ['id', 'version'] }]);
  });
});
