// docs/check.md lists every rule of src/check with its id, statement and source, as the code has them: the table cannot drift.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { RULES } from '../../../src/check/rules/index.js';

const DOC = readFileSync(new URL('../../../../docs/check.md', import.meta.url), 'utf8');

describe('docs/check.md', () => {
  it('has one table row per rule, in the order they run, with its statement, source and needs', () => {
    const rows = [...DOC.matchAll(/^\| `([a-z]+\.[a-z0-9-]+)` \| (.*) \| (.*) \| (.*) \|$/gm)].map((m) => [m[1], m[2], m[3], m[4]]);
    const expected = RULES.map((r) => [r.id, r.title.replace(/\|/g, '\\|'), r.section, r.needs === 'write' ? '`--write`' : r.needs === 'burst' ? '`--burst N`' : '']);
    assert.deepEqual(rows, expected);
  });

  it('shows both example reports', () => {
    assert.match(DOC, /^### Platformatic DB [\d.]+ /m);
    assert.match(DOC, /^### Fastify \+ SQLite CRUD /m);
    assert.equal([...DOC.matchAll(/^\d+ passed, \d+ failed, \d+ not applicable, 0 errors — \d+ requests/gm)].length, 2);
  });
});
