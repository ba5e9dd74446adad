// The generic collection suite (walk.ts) on PostgreSQL, half a: users, orders, reviews and API keys; skipped without CANON_TEST_DATABASE_URL.
import { describe } from 'node:test';
import { PG_SKIP } from '../../support/pg.js';
import { walkSuites } from './walk.js';

if (PG_SKIP) describe('collections walk (postgres)', { skip: PG_SKIP }, () => {});
else walkSuites('postgres', 'a');
