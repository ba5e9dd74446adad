// `canon_meta`: small named values a deployment shares (the generated development secret, search settings), on both stores.

export const META_TABLE = 'CREATE TABLE IF NOT EXISTS canon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)';

/** The first value stored under a key stays: whoever inserts first wins, everyone else reads it. */
export const INSERT_META_IF_ABSENT = 'INSERT INTO canon_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING';

export const READ_META = 'SELECT value FROM canon_meta WHERE key = ?';

/** Replaces a value (settings a migration keeps, such as the searchable fields a search index was built for). */
export const WRITE_META = 'INSERT INTO canon_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';

/** Every key and value under a prefix (`LIKE`: the prefix must hold no `%` or `_` of its own to match literally). */
export const READ_META_PREFIXED = "SELECT key, value FROM canon_meta WHERE key LIKE ? || '%'";
