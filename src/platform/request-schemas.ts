// The bodies of the platform's own requests (login, password change), validated by their use cases and described by the catalog.
import type { JsonSchema } from '../model/schema.js';

const LOGIN: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email: { type: 'string', minLength: 1, maxLength: 254 }, password: { type: 'string', minLength: 1, maxLength: 256 }, csrf_token: { type: 'string' } },
};

const PASSWORD_CHANGE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['new_password'],
  properties: { current_password: { type: 'string', minLength: 1, maxLength: 256 }, new_password: { type: 'string', minLength: 8, maxLength: 256 } },
};

export const PLATFORM_SCHEMAS = { LOGIN, PASSWORD_CHANGE } as const;
