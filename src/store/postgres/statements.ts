// Query texts as PostgreSQL receives them: placeholders numbered once per text, and the most used texts named so each connection parses and plans them once.
import { createHash } from 'node:crypto';
import { numbered } from './dialect.js';

export interface Statement {
  text: string;
  /** Set for the first NAMED_MAX distinct texts: `pg` prepares a named statement once per connection. */
  name?: string;
}

/**
 * A named statement lives as long as its connection, in the server's memory, and PostgreSQL cannot be told to
 * drop one through `pg`'s pool; query shapes depend on the filters clients send (`status[in]=…` with any count
 * of values), so only the first NAMED_MAX texts are named: the store's own statements and the common list
 * shapes, which come first. The rest run unnamed (parsed per call), as every statement did before. The memo
 * of numbered texts is bounded too; when full it starts over. `named: false` (CANON_PG_PREPARED_STATEMENTS=off)
 * names none, for poolers in transaction mode that cannot follow named statements (PgBouncer before 1.21).
 */
const NAMED_MAX = 256;
const MEMO_MAX = 2_048;

export class Statements {
  private readonly memo = new Map<string, Statement>();
  private named = 0;

  constructor(private readonly naming: boolean) {}

  of(sql: string): Statement {
    let statement = this.memo.get(sql);
    if (statement === undefined) {
      if (this.memo.size >= MEMO_MAX) this.memo.clear();
      const text = numbered(sql);
      // The name is the text's digest, so a text keeps its name even once the memo has started over.
      statement = this.naming && this.named < NAMED_MAX ? { text, name: `canon_${createHash('sha1').update(text).digest('base64url')}` } : { text };
      if (statement.name) this.named++;
      this.memo.set(sql, statement);
    }
    return statement;
  }
}
