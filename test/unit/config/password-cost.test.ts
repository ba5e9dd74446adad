// CANON_PASSWORD_COST: scrypt's parameters from the environment, checked, and never below the default in production.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromEnv, resolveConfig } from '../../../src/config/config.js';
import { DEFAULT_SCRYPT_COST, verifyPassword } from '../../../src/auth/passwords.js';
import { PasswordHasher } from '../../../src/auth/password-hasher.js';

describe('CANON_PASSWORD_COST', () => {
  it('unset: the default, OWASP’s minimum (N=2^17, r=8, p=1)', () => {
    assert.deepEqual(resolveConfig(fromEnv({})).passwordCost, { N: 131072, r: 8, p: 1 });
    assert.deepEqual(resolveConfig(fromEnv({ CANON_PASSWORD_COST: '' })).passwordCost, DEFAULT_SCRYPT_COST);
  });

  it('N,r,p sets the cost of new hashes, which carry it; spaces around the commas are allowed', async () => {
    const cost = resolveConfig(fromEnv({ CANON_PASSWORD_COST: '1024, 8, 1' })).passwordCost;
    assert.deepEqual(cost, { N: 1024, r: 8, p: 1 });
    const hasher = new PasswordHasher(cost, { concurrency: 1, maxQueue: 1 });
    const hash = await hasher.hash('long enough password');
    assert.match(hash, /^scrypt\$1024\$8\$1\$/);
    assert.equal(await verifyPassword('long enough password', hash), true);
    assert.equal(await verifyPassword('another password', hash), false);
  });

  it('refuses what is not N,r,p within bounds, naming the setting and the value', () => {
    for (const bad of ['1024', '1024,8', '1024,8,1,1', 'a,8,1', '1000,8,1', '1,8,1', '33554432,8,1', '1024,0,1', '1024,33,1', '1024,8,0', '1024,8,17', '-1024,8,1']) {
      assert.throws(
        () => fromEnv({ CANON_PASSWORD_COST: bad }),
        (err: Error) => err.message.includes('CANON_PASSWORD_COST must be N,r,p') && err.message.includes(`"${bad}"`),
        bad,
      );
    }
  });

  it('in production, a cost with any parameter below the default is refused; the default or stronger is taken', () => {
    for (const weak of ['1024,8,1', '65536,8,2', '131072,4,1', '65536,16,1']) {
      assert.throws(() => fromEnv({ NODE_ENV: 'production', CANON_PASSWORD_COST: weak }), /below the default 131072,8,1: refused in production/, weak);
    }
    assert.deepEqual(fromEnv({ NODE_ENV: 'production', CANON_PASSWORD_COST: '131072,8,1' }).passwordCost, { N: 131072, r: 8, p: 1 });
    assert.deepEqual(fromEnv({ NODE_ENV: 'production', CANON_PASSWORD_COST: '262144,8,2' }).passwordCost, { N: 262144, r: 8, p: 2 });
  });
});
