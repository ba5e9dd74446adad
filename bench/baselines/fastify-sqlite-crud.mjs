// A minimal Fastify 5 + better-sqlite3 CRUD API over products, written the way tutorials write one, for docs/check.md:
// JSON-schema validation of bodies and of limit/offset (Fastify's defaults otherwise), a bare array per page, 201 on
// create, 204 on delete. No auth, ETags, rate limits or idempotency keys. Its own in-memory database, seeded with
// $PRODUCTS products (default 30). Listens on 127.0.0.1:$PORT; exits on SIGTERM or when its stdin closes.
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { stopWithParent } from '../lib/lifecycle.mjs';

const db = new Database(':memory:');
db.exec(`CREATE TABLE products (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  description TEXT,
  price INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`);
const insert = db.prepare('INSERT INTO products (name, description, price, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
for (let i = 1; i <= Number(process.env.PRODUCTS ?? 30); i++) {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  insert.run(`Product ${i}`, `The product number ${i}`, 100 * i, 'active', at, at);
}

const product = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    price: { type: 'integer', minimum: 0 },
    status: { enum: ['draft', 'active', 'archived'] },
  },
};
const idParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] };

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));

app.get(
  '/products',
  {
    schema: {
      querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, offset: { type: 'integer', minimum: 0, default: 0 } } },
    },
  },
  async (request) => {
    const { limit, offset } = request.query;
    return db.prepare('SELECT * FROM products ORDER BY id LIMIT ? OFFSET ?').all(limit, offset);
  },
);

app.get('/products/:id', { schema: { params: idParams } }, async (request, reply) => {
  const row = db.prepare('SELECT * FROM products WHERE id = ?').get(request.params.id);
  if (!row) return reply.code(404).send({ error: 'Product not found' });
  return row;
});

app.post('/products', { schema: { body: { ...product, required: ['name', 'price'] } } }, async (request, reply) => {
  const { name, description = null, price, status = 'active' } = request.body;
  const at = new Date().toISOString();
  const { lastInsertRowid } = insert.run(name, description, price, status, at, at);
  reply.code(201);
  return db.prepare('SELECT * FROM products WHERE id = ?').get(lastInsertRowid);
});

app.patch('/products/:id', { schema: { params: idParams, body: product } }, async (request, reply) => {
  const row = db.prepare('SELECT * FROM products WHERE id = ?').get(request.params.id);
  if (!row) return reply.code(404).send({ error: 'Product not found' });
  const next = { ...row, ...request.body, updated_at: new Date().toISOString() };
  db.prepare('UPDATE products SET name = ?, description = ?, price = ?, status = ?, updated_at = ? WHERE id = ?').run(
    next.name,
    next.description,
    next.price,
    next.status,
    next.updated_at,
    row.id,
  );
  return next;
});

app.delete('/products/:id', { schema: { params: idParams } }, async (request, reply) => {
  const { changes } = db.prepare('DELETE FROM products WHERE id = ?').run(request.params.id);
  if (changes === 0) return reply.code(404).send({ error: 'Product not found' });
  return reply.code(204).send();
});

const port = Number(process.env.PORT ?? 3003);
await app.listen({ port, host: '127.0.0.1' });
console.log(`fastify-sqlite-crud listening on http://127.0.0.1:${port}`);

const stop = () => {
  app.close().finally(() => {
    db.close();
    process.exit(0);
  });
};
stopWithParent(stop);
