// The client-credentials grant without HTTP (src/auth/client-credentials.ts): the client as stored now authenticates, its scopes bound what a token carries; SQLite.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientCredentialsGrant } from '../../../src/auth/client-credentials.js';
import { OAuthError } from '../../../src/auth/oauth-clients.js';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { SYSTEM } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';

describe('the client-credentials grant', () => {
  let core: Core;
  let grant: ClientCredentialsGrant;
  /** What the token service was asked to sign, in order. */
  const issued: Array<{ clientId: string; scopes: string[] }> = [];
  let clientId: string;
  let secret: string;

  before(async () => {
    const config = resolveConfig({ databaseUrl: 'sqlite::memory:', seed: false, secret: 'client-credentials', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
    core = await openCore(config, { appDef: commerce, logger: false });
    grant = new ClientCredentialsGrant(core.store, {
      issue: async (id, scopes) => {
        issued.push({ clientId: id, scopes });
        return { access_token: `token-of-${id}`, token_type: 'Bearer', expires_in: 600, ...(scopes.length ? { scope: scopes.join(' ') } : {}) };
      },
    });
    const created = await core.services.create({ principal: SYSTEM }, 'oauth-clients', { name: 'reports', scopes: ['products:read', 'orders:read'] });
    clientId = String(created.record.client_id);
    secret = String(created.reveal.client_secret);
  });
  after(async () => core.close());

  it('issues a token for the client with the scopes asked for, or else all of its own', async () => {
    issued.length = 0;
    const token = await grant.issue({ clientId, secret, via: 'post' }, undefined, 'products:read');
    assert.deepEqual(token, { access_token: `token-of-${clientId}`, token_type: 'Bearer', expires_in: 600, scope: 'products:read' });
    await grant.issue({ clientId, secret, via: 'basic' }, undefined, undefined);
    assert.deepEqual(issued, [
      { clientId, scopes: ['products:read'] },
      { clientId, scopes: ['products:read', 'orders:read'] },
    ]);
  });

  it('a wrong secret or an unknown client is invalid_client (401, with the Basic challenge when Basic was used); a scope beyond the client’s is invalid_scope', async () => {
    issued.length = 0;
    for (const [credentials, basic] of [
      [{ clientId, secret: 'cs_wrong', via: 'basic' }, true],
      [{ clientId: 'cid_unknown', secret, via: 'post' }, false],
    ] as const) {
      await assert.rejects(grant.issue(credentials, undefined, undefined), (err) => {
        assert.ok(err instanceof OAuthError);
        assert.deepEqual([err.error, err.status, err.basicChallenge], ['invalid_client', 401, basic]);
        return true;
      });
    }
    await assert.rejects(grant.issue({ clientId, secret, via: 'post' }, undefined, 'users:write'), (err) => err instanceof OAuthError && err.error === 'invalid_scope');
    assert.deepEqual(issued, []);
  });

  it('a client deleted since issues nothing', async () => {
    const gone = await core.services.create({ principal: SYSTEM }, 'oauth-clients', { name: 'gone' });
    await core.services.remove({ principal: SYSTEM }, 'oauth-clients', gone.record.id);
    await assert.rejects(
      grant.issue({ clientId: String(gone.record.client_id), secret: String(gone.reveal.client_secret), via: 'post' }, undefined, undefined),
      (err) => err instanceof OAuthError && err.error === 'invalid_client',
    );
  });
});
