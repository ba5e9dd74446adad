// A cached API key answered without a wait reads no credentials epoch it would not use (issue 31.3): on PostgreSQL the epoch is always a read, so the hot path must leave it to the full path rather than send it twice; both stores.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cachedPrincipalForApiKey, principalForApiKey, type CredentialReader } from '../../../src/auth/api-keys.js';
import { CredentialCache } from '../../../src/auth/credential-cache.js';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import type { Principal } from '../../../src/model/principal.js';
import { SYSTEM } from '../../../src/model/principal.js';
import { API_KEYS } from '../../../src/platform/api-key-secrets.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import type { Store } from '../../../src/store/types.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_SKIP, type TestDatabase } from '../../support/pg.js';

/** The store, with its credentialEpoch calls counted. */
function counting(store: Store): { reader: CredentialReader; calls: () => number } {
  let calls = 0;
  const reader = new Proxy(store, {
    get(target, name) {
      if (name === 'credentialEpoch') {
        return () => {
          calls++;
          return target.credentialEpoch();
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { reader, calls: () => calls };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`API keys and the credentials epoch, ${kind}`, { skip: kind === 'postgres' ? PG_SKIP : false }, () => {
    let core: Core;
    let database: TestDatabase | undefined;
    let secret: string;

    before(async () => {
      database = kind === 'postgres' ? await createTestDatabase() : undefined;
      const config = resolveConfig({ databaseUrl: database?.url ?? 'sqlite::memory:', seed: false, secret: 'api-key-epoch', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
      core = await openCore(config, { appDef: commerce, logger: false });
      const created = await core.services.create({ principal: SYSTEM }, API_KEYS, { name: 'epoch test' });
      secret = String(created.reveal.key);
    });
    after(async () => {
      await core?.close();
      await database?.drop();
    });

    it('the full path reads the epoch once; the hot path reads none it would not use, and answers only from a known epoch', async () => {
      const { reader, calls } = counting(core.store);
      const cache = new CredentialCache<Principal>(60_000);
      const principal = await principalForApiKey(reader, 'users', secret, cache);
      assert.equal(principal?.kind, 'api_key');
      assert.equal(calls(), 1, 'principalForApiKey reads the epoch before its look-up');
      const now = cachedPrincipalForApiKey(reader, secret, cache);
      assert.equal(calls(), 1, 'the hot path sent no epoch read');
      if (kind === 'sqlite') assert.deepEqual(now, principal, 'SQLite knows its epoch in memory: the cached key is answered at once');
      else assert.equal(now, undefined, 'PostgreSQL cannot know its epoch without a read: the full path answers');
      assert.deepEqual(await principalForApiKey(reader, 'users', secret, cache), principal, 'and the full path answers from the cache');
      assert.equal(calls(), 2);
    });

    it('a bumped epoch voids the cached key on the hot path too', async () => {
      const cache = new CredentialCache<Principal>(60_000);
      assert.ok(await principalForApiKey(core.store, 'users', secret, cache));
      await core.store.transaction(async (tx) => tx.bumpCredentialEpoch());
      assert.equal(cachedPrincipalForApiKey(core.store, secret, cache), undefined);
    });
  });
}
