// Baseline for bench/collections.mjs: minimal Fastify 5 + better-sqlite3 list endpoint on Canon's SQLite file, read-only.
// GET /products?status=&offset=&limit= runs the same filter and sort as Canon's list (status, price descending, then
// id) and a COUNT(*) for the total, and answers {data, total}: no validation, no auth, no links, no cursors.
// Listens on 127.0.0.1:$PORT, reads $DB_FILE, and exits when its stdin closes (the benchmark went away).
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { stopWithParent } from '../lib/lifecycle.mjs';

const file = process.env.DB_FILE;
if (!file) throw new Error('DB_FILE is required');
const db = new Database(file, { readonly: true, fileMustExist: true });

// The columns Canon's products table has (money is two columns, tags JSON text); fail fast if they moved.
const columns = new Set(
  db
    .prepare("PRAGMA table_info('products')")
    .all()
    .map((c) => c.name),
);
const wanted = ['id', 'version', 'created_at', 'updated_at', 'name', 'description', 'price_amount', 'price_currency', 'status', 'tags'];
const missing = wanted.filter((c) => !columns.has(c));
if (missing.length > 0) throw new Error(`products has no column(s) ${missing.join(', ')}; it has ${[...columns].join(', ')}`);

const page = db.prepare(`SELECT ${wanted.join(', ')} FROM products WHERE status = ? ORDER BY price_amount DESC, id LIMIT ? OFFSET ?`);
const count = db.prepare('SELECT COUNT(*) AS n FROM products WHERE status = ?').pluck();

const product = (row) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  price: { amount: row.price_amount, currency: row.price_currency },
  status: row.status,
  tags: JSON.parse(row.tags ?? '[]'),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/products', async (request) => {
  const { status = 'active', offset = '0', limit = '20' } = request.query;
  const data = page.all(status, Number(limit), Number(offset)).map(product);
  return { data, total: count.get(status) };
});

const port = Number(process.env.PORT ?? 3002);
const host = process.env.HOST ?? '127.0.0.1';
await app.listen({ port, host });
console.log(`fastify-sqlite listening on http://${host}:${port} (${file}, read-only)`);

const stop = () => {
  app.close().finally(() => {
    db.close();
    process.exit(0);
  });
};
stopWithParent(stop);
