// Cookie sessions as use cases without HTTP (src/services/sessions.ts): login under the transport's throttle, the current session, logout; SQLite.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SessionManager } from '../../../src/auth/sessions.js';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM, type Principal } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import { Sessions } from '../../../src/services/sessions.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';

const PASSWORD = 'a long passphrase';

describe('sessions as use cases', () => {
  let core: Core;
  let sessions: Sessions;
  let userId: string;
  /** The accounts the transport was asked to count, in order. */
  let counted: string[];
  const throttle = async (account: string): Promise<void> => void counted.push(account);

  before(async () => {
    const config = resolveConfig({ databaseUrl: 'sqlite::memory:', seed: false, secret: 'sessions', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
    core = await openCore(config, { appDef: commerce, logger: false });
    const manager = new SessionManager(
      core.store,
      core.model.users,
      { timeouts: { policy: 'absolute', absoluteSeconds: 3600, idleSeconds: 600 }, maxPerUser: 5, passwords: core.passwords },
      core.clock,
      (fn) => core.services.commit(fn),
    );
    sessions = new Sessions(manager);
    userId = (await core.services.create({ principal: SYSTEM }, 'users', { email: 'Dana@Example.com', full_name: 'Dana', password: PASSWORD })).record.id;
  });
  after(async () => core.close());

  it('a login counts the account (the email as users are looked up) before the password is checked, and opens a session', async () => {
    counted = [];
    const { session, account } = await sessions.login({ email: 'Dana@Example.com', password: PASSWORD }, 'json', throttle);
    assert.equal(account, 'dana@example.com');
    assert.deepEqual(counted, ['dana@example.com']);
    assert.equal(session.user.id, userId);
    assert.equal(session.record.user_id, userId);
    assert.match(session.id, /^[A-Za-z0-9_-]{43}$/);
  });

  it('a wrong password is 401 with the challenges, counted like any attempt; a throttle that refuses stops the check', async () => {
    counted = [];
    await assert.rejects(
      sessions.login({ email: 'dana@example.com', password: 'wrong, and long enough' }, 'json', throttle),
      (err: { code?: string; facts?: { challenges?: unknown[] } }) => {
        assert.equal(err.code, 'UNAUTHENTICATED');
        assert.ok(err.facts?.challenges?.length);
        return true;
      },
    );
    assert.deepEqual(counted, ['dana@example.com']);
    const refusal = new Error('over budget');
    await assert.rejects(
      sessions.login({ email: 'dana@example.com', password: PASSWORD }, 'json', async () => {
        throw refusal;
      }),
      refusal,
    );
  });

  it('text that is not well-formed is a wrong login (401), counted; a body of the wrong shape is 422', async () => {
    counted = [];
    await assert.rejects(sessions.login({ email: 'dana@example.com', password: 'lone \ud800 surrogate' }, 'json', throttle), { code: 'UNAUTHENTICATED' });
    assert.deepEqual(counted, ['dana@example.com']);
    await assert.rejects(sessions.login({ email: 'dana@example.com' }, 'json', throttle), { code: 'VALIDATION_ERROR' });
  });

  it('the current session is the principal’s, with its user as stored now; after logout it has ended (404)', async () => {
    const { session } = await sessions.login({ email: 'dana@example.com', password: PASSWORD }, 'json', throttle);
    const principal: Principal = {
      kind: 'session',
      credentialId: session.record.id,
      userId,
      role: 'customer',
      scopes: [],
      session: { id: session.record.id, csrfToken: session.csrfToken },
    };
    const current = await sessions.current(principal);
    assert.equal(current.record.id, session.record.id);
    assert.equal(current.user.email, 'dana@example.com');
    assert.equal(current.csrfToken, session.csrfToken);
    await sessions.logout(principal);
    await assert.rejects(sessions.current(principal), { code: 'NOT_FOUND', message: 'The session has ended.' });
  });

  it('a principal not authenticated by a session has no current session to read or end (404)', async () => {
    const key: Principal = { kind: 'api_key', credentialId: 'k', userId, role: 'customer', scopes: [] };
    const message = 'This request is not authenticated by a session cookie, so there is no current session.';
    await assert.rejects(sessions.current(key), { code: 'NOT_FOUND', message });
    await assert.rejects(sessions.logout(key), { code: 'NOT_FOUND', message });
  });
});
