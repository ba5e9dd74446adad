// The credentials epoch (one row, both stores): a number that moves in every transaction that changes a credential.

export const CREDENTIAL_EPOCH_TABLE = 'CREATE TABLE IF NOT EXISTS canon_credential_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL)';

/** Run at every migration: the one row exists from then on. */
export const SEED_CREDENTIAL_EPOCH = 'INSERT INTO canon_credential_epoch (id, epoch) VALUES (1, 0) ON CONFLICT (id) DO NOTHING';

export const READ_CREDENTIAL_EPOCH = 'SELECT epoch FROM canon_credential_epoch WHERE id = 1';

export const BUMP_CREDENTIAL_EPOCH = 'UPDATE canon_credential_epoch SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch';
