// A failure inside a handler becomes a bare 500 INTERNAL_ERROR: no stack, no SQL, no message from the cause.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { commerce } from '../../../examples/commerce/index.js';
import { errorShape, MODES, startServer, type TestServer } from '../../support/harness.js';

const exploding = defineResource({
  name: 'explosions',
  singular: 'explosion',
  fields: { label: f.string({ required: true }) },
  permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
  hooks: {
    beforeCreate() {
      throw new Error('SQLITE_ERROR: near "SELECT password_hash FROM users": syntax error at /srv/app/secret.ts:12');
    },
  },
});

const app = defineApp({ ...commerce, resources: [...commerce.resources, exploding] });

for (const mode of MODES) {
  describe(`internal errors (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode, {}, app);
    });
    after(async () => server.close());

    it('answers 500 INTERNAL_ERROR without leaking the cause, and keeps serving', async () => {
      const res = await server.request('POST', '/v2/explosions', { body: { label: 'x' } });
      assert.equal(res.status, 500);
      const e = errorShape(res);
      assert.equal(e.code, 'INTERNAL_ERROR');
      assert.equal(res.headers['cache-control'], 'no-store');
      for (const leak of ['SQLITE', 'SELECT', 'password_hash', 'secret.ts', 'at ', 'stack']) assert.ok(!res.text.includes(leak), `leaks ${leak}`);
      assert.equal((await server.request('GET', '/v2/explosions')).status, 200);
    });
  });
}
