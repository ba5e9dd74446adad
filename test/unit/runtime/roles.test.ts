// Issue 14.6: a process is a core plus roles; the worker role runs on the core alone, with no HTTP app, and stops cleanly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { openCore } from '../../../src/runtime/core.js';
import { startWorker } from '../../../src/runtime/worker-role.js';
import { TEST_PASSWORD_COST } from '../../support/harness.js';

describe('the core and the worker role', () => {
  it('a worker on a core purges expired idempotency records without any HTTP app, then closes', async () => {
    const config = resolveConfig({
      databaseUrl: 'sqlite::memory:',
      seed: false,
      secret: 'roles',
      passwordCost: TEST_PASSWORD_COST,
      logLevel: 'silent',
      idempotencyPurgeIntervalSeconds: 1,
    });
    const core = await openCore(config, { appDef: commerce, logger: false });
    try {
      await core.store.transaction((tx) => tx.insertIdempotency({ scopeKey: 'expired', fingerprint: 'f', response: '{}', expiresAt: Date.now() - 1000 }));
      assert.ok(await core.store.findIdempotency('expired'));
      const worker = startWorker(core, false);
      // The first purge comes within one interval (a random part of it); bounded at 5 s.
      const deadline = Date.now() + 5000;
      while ((await core.store.findIdempotency('expired')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await worker.close();
      assert.equal(await core.store.findIdempotency('expired'), null);
      assert.equal(core.model.resources.has('products'), true);
    } finally {
      await core.close();
    }
  });

  it('a core refuses to open in production without CANON_SECRET, before touching the store', async () => {
    const config = resolveConfig({ databaseUrl: 'sqlite::memory:', production: true, seed: false, logLevel: 'silent' });
    await assert.rejects(openCore(config, { appDef: commerce, logger: false }), /CANON_SECRET must be set in production/);
  });
});
