// Issue 14.4: validators are cached per compiled resource, so two apps with a same-named resource in one process validate against their own fields.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/errors/app-error.js';
import { compileModel } from '../../../src/model/compile.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { validateBody } from '../../../src/model/validate.js';

const permissions = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
const people = defineResource({
  name: 'people',
  singular: 'person',
  fields: { email: f.email({ required: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }) },
  permissions,
});

function notesOf(fields: Parameters<typeof defineResource>[0]['fields']) {
  return compileModel(defineApp({ resources: [people, defineResource({ name: 'notes', singular: 'note', fields, permissions })], users: 'people' })).resources.get('notes')!;
}

describe('the validator cache', () => {
  it('keeps two apps’ same-named resources apart', () => {
    const withTitle = notesOf({ title: f.string({ required: true }) });
    const withBody = notesOf({ body: f.string({ required: true }) });
    assert.deepEqual(validateBody(withTitle, 'create', 'admin', { title: 'a' }), { title: 'a' });
    assert.deepEqual(validateBody(withBody, 'create', 'admin', { body: 'b' }), { body: 'b' });
    assert.throws(
      () => validateBody(withBody, 'create', 'admin', { title: 'a' }),
      (e: unknown) => e instanceof AppError && e.code === 'VALIDATION_ERROR',
    );
    assert.throws(
      () => validateBody(withTitle, 'create', 'admin', { body: 'b' }),
      (e: unknown) => e instanceof AppError && e.code === 'VALIDATION_ERROR',
    );
  });
});
