// Cookie sessions (spec §5, DESIGN §8): random ids stored hashed, lifetime policies, at most N per user, logout.
import { v7 as uuidv7 } from 'uuid';
import { SESSIONS } from '../platform/internal.js';
import type { Commit, Store, StoredRecord, Tx } from '../store/types.js';
import type { PasswordHasher } from './password-hasher.js';
import type { Principal } from '../model/principal.js';
import { digest, randomSecret } from '../lib/secrets.js';
import { expiryOf, maxAgeSeconds, renewsOnUse, type SessionTimeouts } from './session-policy.js';

export interface SessionSettings {
  timeouts: SessionTimeouts;
  maxPerUser: number;
  passwords: PasswordHasher;
}

/** The account a login names: the email as users are looked up by it, so guessing budgets and lookups agree. */
export function loginName(email: string): string {
  return email.toLowerCase();
}

export interface NewSession {
  /** The 256-bit id, sent once in the cookie and never stored. */
  id: string;
  csrfToken: string;
  record: StoredRecord;
  user: StoredRecord;
  maxAge: number;
}

export interface ResolvedSession {
  principal: Principal;
  record: StoredRecord;
  /** Set when the expiry moved, so the cookie must be sent again with this Max-Age. */
  renewedMaxAge?: number;
}

const BY_ID = (id: string) => [{ path: 'id_hash', op: 'eq' as const, value: digest(id) }];
/** Session ids are exactly what randomSecret makes; anything else is not looked up at all. */
const ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class SessionManager {
  constructor(
    private readonly store: Store,
    private readonly users: string,
    private readonly settings: SessionSettings,
    private readonly clock: () => Date,
    /** Every write goes through the one commit path (ResourceService.commit), like every other change. */
    private readonly commit: Commit = (fn) => store.transaction(fn),
  ) {}

  /** Checks the password (against a dummy hash for unknown emails, so timing does not tell) and opens a new session. */
  async login(email: string, password: string): Promise<NewSession | null> {
    const user = await this.store.findOne(this.users, [{ path: 'email', op: 'eq', value: loginName(email) }]);
    const { passwords } = this.settings;
    const ok = user ? await passwords.verify(password, String(user.password_hash)) : await passwords.verifyUnknown(password);
    if (!user || !ok) return null;
    const id = randomSecret('', 32);
    const csrfToken = randomSecret('', 32);
    const now = this.clock();
    const nowIso = now.toISOString();
    const expires = expiryOf(this.settings.timeouts, now.getTime(), now.getTime());
    const record: StoredRecord = {
      id: uuidv7(),
      version: 1,
      created_at: nowIso,
      updated_at: nowIso,
      id_hash: digest(id),
      user_id: user.id,
      roles: [String(user.role)],
      last_accessed: nowIso,
      expires_at: new Date(expires).toISOString(),
      csrf_token: csrfToken,
      data: {},
    };
    await this.commit(async (tx) => {
      // At most N sessions per user: the oldest go first (spec §5 rule 8); expired ones go anyway.
      const { rows } = await tx.list(SESSIONS, {
        where: [{ path: 'user_id', op: 'eq', value: user.id }],
        orderBy: [
          { path: 'created_at', desc: false },
          { path: 'id', desc: false },
        ],
        limit: 1000,
      });
      const live = rows.filter((s) => Date.parse(String(s.expires_at)) > now.getTime());
      for (const s of rows) if (!live.includes(s)) await tx.delete(SESSIONS, s.id);
      for (const s of live.slice(0, Math.max(0, live.length - this.settings.maxPerUser + 1))) await tx.delete(SESSIONS, s.id);
      await tx.insert(SESSIONS, record);
    });
    return { id, csrfToken, record, user, maxAge: maxAgeSeconds(expires, now.getTime()) };
  }

  /** The session a cookie names, if it exists and has not expired; using it renews it as its policy says. */
  async resolve(id: string): Promise<ResolvedSession | null> {
    if (!ID_SHAPE.test(id)) return null;
    const session = await this.store.findOne(SESSIONS, BY_ID(id));
    if (!session) return null;
    const now = this.clock().getTime();
    if (Date.parse(String(session.expires_at)) <= now) {
      await this.commit((tx) => tx.delete(SESSIONS, session.id));
      return null;
    }
    const user = await this.store.get(this.users, String(session.user_id));
    if (!user) return null;
    let record = session;
    let renewedMaxAge: number | undefined;
    const { timeouts } = this.settings;
    if (renewsOnUse(timeouts.policy)) {
      const expires = expiryOf(timeouts, Date.parse(session.created_at), now);
      const iso = new Date(now).toISOString();
      record = { ...session, version: session.version + 1, updated_at: iso, last_accessed: iso, expires_at: new Date(expires).toISOString() };
      await this.commit((tx) => tx.update(SESSIONS, record));
      renewedMaxAge = maxAgeSeconds(expires, now);
    }
    const principal: Principal = {
      kind: 'session',
      credentialId: session.id,
      userId: user.id,
      role: String(user.role),
      scopes: [],
      session: { id: session.id, csrfToken: String(session.csrf_token) },
    };
    return renewedMaxAge === undefined ? { principal, record } : { principal, record, renewedMaxAge };
  }

  async logout(sessionRecordId: string): Promise<void> {
    await this.commit((tx) => tx.delete(SESSIONS, sessionRecordId));
  }

  /** Ends every session of a user, inside the caller's transaction (a password change, spec §5 rule 7). */
  async endAllForUser(tx: Tx, userId: string): Promise<number> {
    const { rows } = await tx.list(SESSIONS, { where: [{ path: 'user_id', op: 'eq', value: userId }], orderBy: [{ path: 'id', desc: false }], limit: 10_000 });
    for (const s of rows) await tx.delete(SESSIONS, s.id);
    return rows.length;
  }

  async get(sessionRecordId: string): Promise<StoredRecord | null> {
    return this.store.get(SESSIONS, sessionRecordId);
  }

  /** A session by its record id with its user as stored now; null once either is gone (logged out, expired, deleted). */
  async current(sessionRecordId: string, userId: string): Promise<{ record: StoredRecord; user: StoredRecord } | null> {
    const record = await this.get(sessionRecordId);
    const user = await this.store.get(this.users, userId);
    return record && user ? { record, user } : null;
  }
}
