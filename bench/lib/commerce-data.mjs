// Commerce rows for GraphQL benchmarks: users, products, orders and order items, seeded through Canon's store and copied into a plain schema with foreign keys.
import { v7 as uuidv7 } from 'uuid';
import { productRecord } from './canon.mjs';

const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'];
const EPOCH_MS = Date.UTC(2026, 0, 1);

/**
 * Deterministic rows (ids aside, which are UUIDv7 made in insertion order): `users` customers, `products` as
 * bench/lib/canon.mjs makes them, `orders` spread over the users, each with 1–4 items of spread products priced as
 * the product is (the order's total is their sum, as Canon's hooks would make it). Shaped as Canon's store takes them.
 */
export function commerceRows({ users = 200, products = 500, orders = 2_000 } = {}) {
  const at = (i) => new Date(EPOCH_MS + i * 1000).toISOString();
  const userRows = Array.from({ length: users }, (_, i) => ({
    id: uuidv7(),
    version: 1,
    created_at: at(i),
    updated_at: at(i),
    email: `bench-user-${i}@example.com`,
    full_name: `Bench user ${i}`,
    role: 'customer',
    // Never checked: the benchmark reads with the admin key; the column only has to be filled as Canon fills it.
    password_hash: 'bench-not-a-hash',
  }));
  const productRows = Array.from({ length: products }, (_, i) => productRecord(i));
  const orderRows = [];
  const itemRows = [];
  for (let i = 0; i < orders; i++) {
    const id = uuidv7();
    const items = [];
    for (let j = 0; j < 1 + ((i * 31) % 4); j++) {
      const product = productRows[(i * 13 + j * 101) % products];
      items.push({
        id: uuidv7(),
        version: 1,
        created_at: at(users + i),
        updated_at: at(users + i),
        order_id: id,
        product_id: product.id,
        quantity: 1 + ((i + j) % 5),
        unit_price: { ...product.price },
      });
    }
    const amount = items.reduce((sum, item) => sum + item.quantity * item.unit_price.amount, 0);
    orderRows.push({
      id,
      version: 1,
      created_at: at(users + i),
      updated_at: at(users + i),
      user_id: userRows[(i * 7) % users].id,
      status: ORDER_STATUSES[i % ORDER_STATUSES.length],
      total: { amount, currency: 'EUR' },
    });
    itemRows.push(...items);
  }
  return { users: userRows, products: productRows, orders: orderRows, orderItems: itemRows };
}

/** Inserts the rows through Canon's own store (one transaction per resource); returns the seconds taken. */
export async function seedCanonCommerce(store, rows) {
  const started = process.hrtime.bigint();
  const tables = [
    ['users', rows.users],
    ['products', rows.products],
    ['orders', rows.orders],
    ['order-items', rows.orderItems],
  ];
  for (const [resource, records] of tables) {
    await store.transaction(async (tx) => {
      for (const record of records) await tx.insert(resource, record);
    });
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * The plain schema Platformatic DB reads: one table per resource keyed by Canon's id, money as two columns, and
 * the foreign keys its GraphQL relations are generated from (orders.user_id, order_items.order_id and .product_id),
 * each indexed. Canon's own tables have none (their key is an integer rowid, references are checked by the
 * services), so Platformatic could not relate them. `idType`: VARCHAR(36) on SQLite (Platformatic refuses a TEXT key), uuid on PostgreSQL; `timeType` likewise.
 */
export function plainSchema({ idType, timeType }) {
  const common = `id ${idType} PRIMARY KEY, created_at ${timeType} NOT NULL, updated_at ${timeType} NOT NULL`;
  return [
    `CREATE TABLE users (${common}, email TEXT NOT NULL UNIQUE, full_name TEXT NOT NULL, role TEXT NOT NULL)`,
    `CREATE TABLE products (${common}, name TEXT NOT NULL, description TEXT, price_amount INTEGER NOT NULL, price_currency TEXT NOT NULL, status TEXT NOT NULL)`,
    `CREATE TABLE orders (${common}, user_id ${idType} NOT NULL REFERENCES users (id), status TEXT NOT NULL, total_amount INTEGER NOT NULL, total_currency TEXT NOT NULL)`,
    `CREATE TABLE order_items (${common}, order_id ${idType} NOT NULL REFERENCES orders (id), product_id ${idType} NOT NULL REFERENCES products (id), quantity INTEGER NOT NULL, unit_price_amount INTEGER NOT NULL, unit_price_currency TEXT NOT NULL)`,
    'CREATE INDEX orders_user_id ON orders (user_id)',
    'CREATE INDEX order_items_order_id ON order_items (order_id)',
    'CREATE INDEX order_items_product_id ON order_items (product_id)',
  ];
}

/** The rows as the plain schema's columns, table by table in foreign-key order. */
export function plainRows(rows) {
  const base = (r) => ({ id: r.id, created_at: r.created_at, updated_at: r.updated_at });
  return [
    ['users', rows.users.map((r) => ({ ...base(r), email: r.email, full_name: r.full_name, role: r.role }))],
    [
      'products',
      rows.products.map((r) => ({ ...base(r), name: r.name, description: r.description, price_amount: r.price.amount, price_currency: r.price.currency, status: r.status })),
    ],
    ['orders', rows.orders.map((r) => ({ ...base(r), user_id: r.user_id, status: r.status, total_amount: r.total.amount, total_currency: r.total.currency }))],
    [
      'order_items',
      rows.orderItems.map((r) => ({
        ...base(r),
        order_id: r.order_id,
        product_id: r.product_id,
        quantity: r.quantity,
        unit_price_amount: r.unit_price.amount,
        unit_price_currency: r.unit_price.currency,
      })),
    ],
  ];
}

/** Writes the plain schema and rows into a new SQLite file (WAL, as Canon's), with better-sqlite3. */
export async function writePlainSqlite(file, rows) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.transaction(() => {
      for (const statement of plainSchema({ idType: 'VARCHAR(36)', timeType: 'TEXT' })) db.exec(statement);
      for (const [table, records] of plainRows(rows)) {
        const columns = Object.keys(records[0]);
        const insert = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
        for (const record of records) insert.run(record);
      }
    })();
    db.exec('ANALYZE');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Writes the plain schema and rows into a PostgreSQL database through `client` (node-postgres), then ANALYZE. */
export async function writePlainPg(client, rows) {
  await client.query('BEGIN');
  for (const statement of plainSchema({ idType: 'uuid', timeType: 'timestamptz' })) await client.query(statement);
  for (const [table, records] of plainRows(rows)) {
    const columns = Object.keys(records[0]);
    // Multi-row INSERTs of 500 rows: well under PostgreSQL's 65,535 parameters per statement.
    for (let from = 0; from < records.length; from += 500) {
      const chunk = records.slice(from, from + 500);
      const values = chunk.map((_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
      await client.query(
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(', ')}`,
        chunk.flatMap((record) => columns.map((c) => record[c])),
      );
    }
  }
  await client.query('COMMIT');
  await client.query('ANALYZE');
}
