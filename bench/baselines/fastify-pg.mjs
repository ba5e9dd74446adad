// Baseline for bench/postgres.mjs: minimal Fastify 5 + pg (pool of 10) on Canon's PostgreSQL database.
// GET /products/:id reads one product by id; GET /products?status=&limit= lists `WHERE status = $1 ORDER BY
// price_amount DESC, id LIMIT limit + 1` and answers {data, has_more}: no validation, no auth, no links.
// Listens on 127.0.0.1:$PORT, connects to $DATABASE_URL, and exits when its stdin closes.
import Fastify from 'fastify';
import pg from 'pg';
import { stopWithParent } from '../lib/lifecycle.mjs';

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error('DATABASE_URL is required');
const pool = new pg.Pool({ connectionString, max: 10 });

// Canon's columns for products, without its internal search column. Plain (unnamed) queries, as Canon's store sends.
const COLUMNS = 'id, version, created_at, updated_at, name, description, price_amount, price_currency, status, tags';
const product = (row) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  price: { amount: Number(row.price_amount), currency: row.price_currency },
  status: row.status,
  tags: row.tags,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const app = Fastify({ logger: false });
app.get('/healthz', async () => {
  await pool.query('SELECT 1');
  return { status: 'ok' };
});
app.get('/products/:id', async (request, reply) => {
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM products WHERE id = $1`, [request.params.id]);
  if (rows.length === 0) return reply.code(404).send({ error: 'not found' });
  return product(rows[0]);
});
app.get('/products', async (request) => {
  const { status = 'active', limit = '20' } = request.query;
  const n = Number(limit);
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM products WHERE status = $1 ORDER BY price_amount DESC, id LIMIT $2`, [status, n + 1]);
  return { data: rows.slice(0, n).map(product), has_more: rows.length > n };
});

const port = Number(process.env.PORT ?? 3003);
const host = process.env.HOST ?? '127.0.0.1';
await app.listen({ port, host });
console.log(`fastify-pg listening on http://${host}:${port}`);

const stop = () => {
  app.close().finally(() => pool.end().finally(() => process.exit(0)));
};
stopWithParent(stop);
