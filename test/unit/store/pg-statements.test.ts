// PostgreSQL statements: numbered placeholders, names for the first 256 distinct texts only, none when CANON_PG_PREPARED_STATEMENTS=off.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromEnv } from '../../../src/config/config.js';
import { Statements } from '../../../src/store/postgres/statements.js';

describe('PostgreSQL statement names', () => {
  it('numbers the placeholders and names a text by its digest, the same name every time', () => {
    const s = new Statements(true);
    const a = s.of('SELECT * FROM t WHERE a = ? AND b = ?');
    assert.equal(a.text, 'SELECT * FROM t WHERE a = $1 AND b = $2');
    assert.match(a.name!, /^canon_[A-Za-z0-9_-]{27}$/);
    assert.equal(s.of('SELECT * FROM t WHERE a = ? AND b = ?'), a);
    assert.equal(new Statements(true).of('SELECT * FROM t WHERE a = ? AND b = ?').name, a.name);
    assert.notEqual(s.of('SELECT * FROM t WHERE a = ?').name, a.name);
  });

  it('names only the first 256 distinct texts: later shapes run unnamed, so clients cannot grow every connection without bound', () => {
    const s = new Statements(true);
    const names = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const st = s.of(`SELECT * FROM t WHERE a IN (${Array.from({ length: i + 1 }, () => '?').join(', ')})`);
      if (st.name) names.add(st.name);
      else assert.ok(i >= 256, `text ${i} unnamed`);
    }
    assert.equal(names.size, 256);
  });

  it('names nothing when naming is off, and the setting reads CANON_PG_PREPARED_STATEMENTS', () => {
    const st = new Statements(false).of('SELECT ? AS x');
    assert.deepEqual(st, { text: 'SELECT $1 AS x' });
    assert.equal(fromEnv({ CANON_PG_PREPARED_STATEMENTS: 'off' }).pgPreparedStatements, false);
    assert.equal(fromEnv({ CANON_PG_PREPARED_STATEMENTS: 'ON' }).pgPreparedStatements, true);
    assert.equal(fromEnv({}).pgPreparedStatements, undefined);
    assert.throws(() => fromEnv({ CANON_PG_PREPARED_STATEMENTS: 'maybe' }), /CANON_PG_PREPARED_STATEMENTS must be one of on, off/);
  });
});
