// defineApp refuses, when the module loads, a users resource that credentials cannot act for: no email to log in by, or no role to grant.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import type { FieldDef } from '../../../src/model/types.js';
import { loadAppDef } from '../../../src/runtime/app-def.js';

const permissions = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
const people = (fields: Record<string, FieldDef>) => defineResource({ name: 'people', singular: 'person', fields, permissions });

describe('defineApp: the users resource', () => {
  it('with an email and a role (an enum or a string) it is accepted', () => {
    assert.doesNotThrow(() => defineApp({ resources: [people({ email: f.email(), role: f.enum(['admin', 'member']) })], users: 'people' }));
    assert.doesNotThrow(() => defineApp({ resources: [people({ email: f.email(), role: f.string() })], users: 'people' }));
  });

  it('without a role: refused, saying why', () => {
    assert.throws(() => defineApp({ resources: [people({ email: f.email() })], users: 'people' }), {
      message: 'defineApp: the users resource "people" needs a role field, f.enum([...your roles]): a credential acting for a user has that user\'s role, which permissions grant',
    });
    assert.throws(() => defineApp({ resources: [people({ email: f.email(), role: f.integer() })], users: 'people' }), /needs a role field/);
  });

  it('without an email field (f.email, stored lowercased, as logins look it up): refused, saying why', () => {
    assert.throws(() => defineApp({ resources: [people({ role: f.enum(['admin']) })], users: 'people' }), {
      message: 'defineApp: the users resource "people" needs an email field, f.email(): logins (POST /sessions) find a user by it',
    });
    assert.throws(() => defineApp({ resources: [people({ email: f.string(), role: f.enum(['admin']) })], users: 'people' }), /needs an email field/);
  });

  it('a module (CANON_CONFIG) exporting the app without defineApp is checked the same when it loads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canon-define-app-'));
    try {
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      const resource = `{ name: 'people', singular: 'person', fields: { email: { type: 'email' } }, permissions: ${JSON.stringify(permissions)} }`;
      writeFileSync(join(dir, 'app.js'), `export default { resources: [${resource}], users: 'people' };\n`);
      await assert.rejects(loadAppDef(join(dir, 'app.js')), /the users resource "people" needs a role field/);
      writeFileSync(join(dir, 'none.js'), 'export default 42;\n');
      await assert.rejects(loadAppDef(join(dir, 'none.js')), /none\.js must export the app definition \(defineApp\(\.\.\.\)\) as its default export/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
