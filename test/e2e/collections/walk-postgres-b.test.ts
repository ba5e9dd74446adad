// The generic collection suite (walk.ts) on PostgreSQL, half b: products, a user's orders and order items, nested and top-level; products over a socket too; skipped without CANON_TEST_DATABASE_URL.
import { describe } from 'node:test';
import { PG_SKIP } from '../../support/pg.js';
import { walkSuites } from './walk.js';

if (PG_SKIP) describe('collections walk (postgres)', { skip: PG_SKIP }, () => {});
else walkSuites('postgres', 'b');
