// Reference domain: products. Any principal reads; admins write; `q` will search name and description.
import { defineResource, f } from '../../src/index.js';

export const products = defineResource({
  name: 'products',
  singular: 'product',
  fields: {
    name: f.string({ required: true, minLength: 1, maxLength: 200, sortable: true, searchable: true }),
    description: f.string({ maxLength: 5000, searchable: true }),
    price: f.money({ required: true, filterable: true, sortable: true }),
    status: f.enum(['draft', 'active', 'archived'], { default: 'active', filterable: true }),
    tags: f.strings({ default: [] }),
  },
  permissions: { read: ['authenticated'], create: ['admin'], update: ['admin'], delete: ['admin'] },
});
