// The committed SDL (docs/schema.graphql) is the schema the server serves and `canon graphql-schema` prints: CI fails when the model changes and it was not regenerated.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { buildClientSchema, buildSchema as fromSdl, getIntrospectionQuery, lexicographicSortSchema, printSchema, type IntrospectionQuery } from 'graphql';
import { startServer, type TestServer } from '../../support/harness.js';
import { printSdl } from '../../../src/graphql/sdl.js';
import { data } from './support.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const COMMITTED = readFileSync('docs/schema.graphql', 'utf8');
const REGENERATE = 'docs/schema.graphql differs from the model: run canon graphql-schema --out docs/schema.graphql';

describe('the GraphQL schema (SDL)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer('listen');
  });
  after(async () => server.close());

  it('docs/schema.graphql is the schema of the model and the catalog (the drift check)', () => {
    assert.equal(printSdl(server.runtime.model, server.runtime.catalog), COMMITTED, REGENERATE);
  });

  it('the server serves that schema: introspected, it is the committed SDL (types in any order)', async () => {
    const introspected = (await data(server, getIntrospectionQuery({ specifiedByUrl: true }))) as IntrospectionQuery;
    const sorted = (schema: Parameters<typeof lexicographicSortSchema>[0]): string => printSchema(lexicographicSortSchema(schema));
    assert.equal(sorted(buildClientSchema(introspected)), sorted(fromSdl(COMMITTED)));
  });

  it('canon graphql-schema prints it, and writes it with --out', async () => {
    const { stdout } = await run(process.execPath, [CLI, 'graphql-schema'], { env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } });
    assert.equal(stdout, COMMITTED, REGENERATE);
    const dir = mkdtempSync(join(tmpdir(), 'canon-sdl-'));
    try {
      const out = join(dir, 'schema.graphql');
      const { stderr } = await run(process.execPath, [CLI, 'graphql-schema', '--out', out], { env: { ...process.env, DATABASE_URL: 'sqlite::memory:' } });
      assert.match(stderr, /wrote/);
      assert.equal(readFileSync(out, 'utf8'), COMMITTED);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names what DESIGN §7 names', () => {
    for (const line of [
      'type Product {',
      'type OrderItem {',
      '  fullName: String!',
      '  product(id: ID!): Product',
      '): ProductConnection!',
      '  cancelOrder(id: ID!): Order!',
      '  payOrder(id: ID!): AcceptedOperation!',
      '  createProduct(input: ProductCreateInput!): Product!',
      '  updateProduct(id: ID!, input: ProductUpdateInput!, ifMatch: String): Product!',
      '  replaceProduct(id: ID!, input: ProductReplaceInput!, ifMatch: String): Product!',
      '  deleteProduct(id: ID!, ifMatch: String): ID!',
      '  etag: String!',
      '  tracking: JSON',
      '  payment: ActionOperation',
      '  createApiKey(input: ApiKeyCreateInput!): ApiKey!',
      '  createWebhookEndpoint(input: WebhookEndpointCreateInput!): WebhookEndpoint!',
      'type PageInfo {',
      'input ProductFilter {',
    ]) {
      assert.ok(COMMITTED.includes(`${line}\n`) || COMMITTED.includes(line), line);
    }
    // Deliveries are written by workers only: REST has no create for them, nor does GraphQL.
    assert.ok(!COMMITTED.includes('createWebhookDelivery'));
    assert.ok(!/\bSession\b/.test(COMMITTED), 'internal resources are not in the schema');
  });
});
