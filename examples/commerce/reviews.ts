// Reference domain: reviews of products (`item_id`), written by the calling user; listed with ?item_id= (no deeper nesting).
import { AppError, defineResource, f } from '../../src/index.js';

export const reviews = defineResource({
  name: 'reviews',
  singular: 'review',
  fields: {
    item_id: f.uuid({ required: true, createOnly: true, filterable: true, references: 'products' }),
    user_id: f.uuid({ readOnly: true, filterable: true }),
    rating: f.integer({ required: true, minimum: 1, maximum: 5, filterable: true, sortable: true }),
    title: f.string({ required: true, minLength: 1, maxLength: 200, searchable: true }),
    body: f.string({ maxLength: 5000, searchable: true }),
  },
  belongsTo: [
    { resource: 'products', field: 'item_id', onDelete: 'cascade' },
    { resource: 'users', field: 'user_id', onDelete: 'cascade' },
  ],
  ownership: { field: 'user_id' },
  permissions: { read: ['authenticated'], create: ['admin', 'customer'], update: ['admin', 'owner'], delete: ['admin', 'owner'] },
  hooks: {
    beforeCreate(values, ctx) {
      // The author is the caller; an admin key bound to no user cannot write reviews.
      if (!ctx.principal.userId) {
        throw new AppError('FORBIDDEN', 'Reviews are written by users; use an API key bound to a user.');
      }
      return { ...values, user_id: ctx.principal.userId };
    },
  },
});
