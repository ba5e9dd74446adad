// Reference domain: users. Admins manage them; a customer reads and patches itself; passwords are hashed with scrypt.
import { defineResource, f } from '../../src/index.js';

export const users = defineResource({
  name: 'users',
  singular: 'user',
  fields: {
    email: f.email({ required: true, unique: true, filterable: true }),
    full_name: f.string({ required: true, minLength: 1, maxLength: 200, sortable: true }),
    role: f.enum(['admin', 'customer'], { default: 'customer', filterable: true, writableBy: ['admin'] }),
    // Changing a password goes through its own endpoint (current password required), never PUT/PATCH.
    password: f.string({ required: true, minLength: 8, maxLength: 256, writeOnly: true, virtual: true, createOnly: true }),
    password_hash: f.string({ hidden: true }),
  },
  ownership: { field: 'id' },
  permissions: { read: ['admin', 'owner'], create: ['admin'], update: ['admin', 'owner'], delete: ['admin'] },
  hooks: {
    // Hashing takes ~100 ms on purpose, so it happens before the write transaction opens.
    async prepare(values, ctx) {
      const { password, ...rest } = values;
      return { ...rest, password_hash: await ctx.hashPassword(String(password)) };
    },
  },
});
