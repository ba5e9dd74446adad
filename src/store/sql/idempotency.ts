// The idempotency-record table (DESIGN §11) and every statement on it (`?` placeholders), for SQLite and PostgreSQL.

const IDEMPOTENCY_TABLE_NAME = 'canon_idempotency';

/** A key that has a record already is reported as UniqueViolation(IDEMPOTENCY_RESOURCE, 'scope_key'). */
export const IDEMPOTENCY_RESOURCE = 'idempotency';

/**
 * `seq` orders the rows as they were stored (SQLite: a rowid appended at the end; PostgreSQL: an identity),
 * so a new row touches the last leaf of the table. PostgreSQL finds a key through a UNIQUE index on
 * `scope_key`; SQLite (`uniqueKey` false) through an in-memory directory instead, which spares every keyed
 * POST a page written at a random place (src/store/sqlite/idempotency-directory.ts).
 */
export function idempotencyTable(seqColumn: string, uniqueKey: boolean): string {
  return `CREATE TABLE IF NOT EXISTS ${IDEMPOTENCY_TABLE_NAME} (
  ${seqColumn},
  scope_key TEXT NOT NULL${uniqueKey ? ' UNIQUE' : ''},
  fingerprint TEXT NOT NULL,
  response TEXT NOT NULL,
  expires_at BIGINT NOT NULL
)`;
}

/** SQLite: whether the table was made with the UNIQUE index earlier builds had (SQLite names it `sqlite_autoindex_…`). */
export const SQLITE_IDEMPOTENCY_HAS_UNIQUE_INDEX = `SELECT 1 FROM sqlite_master WHERE type = 'index' AND tbl_name = '${IDEMPOTENCY_TABLE_NAME}' AND name LIKE 'sqlite_autoindex_%'`;

/**
 * SQLite: copies such a table into the form without the index, keeping every row and its seq. SQLite
 * cannot drop a constraint's index in place. Run inside a transaction.
 */
export function sqliteIdempotencyWithoutUniqueIndex(): string[] {
  const old = `${IDEMPOTENCY_TABLE_NAME}_unique`;
  return [
    `ALTER TABLE ${IDEMPOTENCY_TABLE_NAME} RENAME TO ${old}`,
    idempotencyTable('seq INTEGER PRIMARY KEY', false),
    `INSERT INTO ${IDEMPOTENCY_TABLE_NAME} (seq, scope_key, fingerprint, response, expires_at) SELECT seq, scope_key, fingerprint, response, expires_at FROM ${old} ORDER BY seq`,
    `DROP TABLE ${old}`,
  ];
}

const SELECT_IDEMPOTENCY = `SELECT scope_key AS "scopeKey", fingerprint, response, expires_at AS "expiresAt" FROM ${IDEMPOTENCY_TABLE_NAME}`;

/** PostgreSQL's look-up and removal by key, through its UNIQUE index (SQLite goes by seq, below). */
export const FIND_IDEMPOTENCY = `${SELECT_IDEMPOTENCY} WHERE scope_key = ?`;

/** SQLite's directory: a row by its seq, the rows from a seq on, deleting one row, and the oldest seq left. */
export const FIND_IDEMPOTENCY_BY_SEQ = `${SELECT_IDEMPOTENCY} WHERE seq = ?`;
export const IDEMPOTENCY_TAIL = `SELECT seq, scope_key FROM ${IDEMPOTENCY_TABLE_NAME} WHERE seq >= ? ORDER BY seq`;
export const DELETE_IDEMPOTENCY_BY_SEQ = `DELETE FROM ${IDEMPOTENCY_TABLE_NAME} WHERE seq = ?`;
export const OLDEST_IDEMPOTENCY_SEQ = `SELECT min(seq) FROM ${IDEMPOTENCY_TABLE_NAME}`;

export const INSERT_IDEMPOTENCY = `INSERT INTO ${IDEMPOTENCY_TABLE_NAME} (scope_key, fingerprint, response, expires_at) VALUES (?, ?, ?, ?)`;

/** PostgreSQL: removes the key's record if it expired by the given time. */
export const DELETE_EXPIRED_IDEMPOTENCY = `DELETE FROM ${IDEMPOTENCY_TABLE_NAME} WHERE scope_key = ? AND expires_at <= ?`;

/**
 * One bounded purge step (parameters: batch, now): the oldest `batch` rows by `seq`, up to the first one
 * still live. Walks the table's own order, so `expires_at` needs no index: one B-tree fewer to write on
 * every keyed POST. After a change of lifetime, rows behind a live one wait their turn; look-ups check
 * `expires_at`, so that only delays reclaiming space.
 */
export const PURGE_IDEMPOTENCY = `WITH head AS (SELECT seq, expires_at FROM ${IDEMPOTENCY_TABLE_NAME} ORDER BY seq LIMIT ?),
  live AS (SELECT min(seq) AS seq FROM head WHERE expires_at > ?)
DELETE FROM ${IDEMPOTENCY_TABLE_NAME} WHERE seq IN (SELECT seq FROM head WHERE (SELECT seq FROM live) IS NULL OR seq < (SELECT seq FROM live))`;
