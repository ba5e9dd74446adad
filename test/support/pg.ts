// PostgreSQL for tests: each call makes its own database (dropped afterwards) on CANON_TEST_DATABASE_URL's server.
import { randomBytes } from 'node:crypto';

export const PG_URL = process.env.CANON_TEST_DATABASE_URL;
export const PG_SKIP = PG_URL ? false : 'CANON_TEST_DATABASE_URL is not set: PostgreSQL suites skipped';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!PG_URL) throw new Error(String(PG_SKIP));
  const name = `canon_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  // Imported here, not at the top: every suite imports this module through the harness, most never use PostgreSQL.
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    // A commit need not wait for its WAL flush here: the tests kill Canon's processes, never the PostgreSQL server,
    // and against those a commit is as visible and as lasting either way. Measured: the collections walk on
    // PostgreSQL took 39.5 s waiting for each flush, 33.4 s without.
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
