// The generic collection suite (walk.ts) on PostgreSQL: in-process and over a real socket; skipped without CANON_TEST_DATABASE_URL.
import { describe } from 'node:test';
import { MODES } from '../../support/harness.js';
import { PG_SKIP } from '../../support/pg.js';
import { walkSuites } from './walk.js';

if (PG_SKIP) describe('collections walk (postgres)', { skip: PG_SKIP }, () => {});
else walkSuites(MODES.filter((mode) => mode.endsWith('/postgres')));
