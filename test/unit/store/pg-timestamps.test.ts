// PostgreSQL timestamp text → ISO 8601 with milliseconds, without a Date in between (and with one for anything else).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isoFromPg } from '../../../src/store/postgres/pg-store.js';

it('converts every precision PostgreSQL prints for UTC timestamps', () => {
  const cases: Array<[string, string]> = [
    ['2026-11-21 20:58:09.328+00', '2026-11-21T20:58:09.328Z'],
    ['2026-11-21 20:58:09.3+00', '2026-11-21T20:58:09.300Z'],
    ['2026-11-21 20:58:09+00', '2026-11-21T20:58:09.000Z'],
    ['2026-11-21 20:58:09.123456+00', '2026-11-21T20:58:09.123Z'],
    ['2026-11-21 21:58:09.5+01', '2026-11-21T20:58:09.500Z'],
  ];
  for (const [pg, iso] of cases) assert.equal(isoFromPg(pg), iso, pg);
});
