// defineResource() and defineApp(): identity functions that type-check a definition and catch authoring mistakes early.
import type { AppDef, FieldDef, ResourceDef } from './types.js';

const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const FIELD = /^[a-z][a-z0-9_]*$/;
const RESERVED = new Set(['id', 'version', 'created_at', 'updated_at', 'links']);

export function defineResource(def: ResourceDef): ResourceDef {
  if (!NAME.test(def.name)) throw new Error(`resource name "${def.name}" must be plural lowercase words joined by hyphens`);
  for (const [name, field] of Object.entries(def.fields)) {
    if (!FIELD.test(name)) throw new Error(`${def.name}.${name}: field names are lowercase snake_case`);
    if (RESERVED.has(name)) throw new Error(`${def.name}.${name}: the name is reserved for system fields`);
    checkField(def.name, name, field);
  }
  for (const rel of def.belongsTo ?? []) {
    if (!def.fields[rel.field]) throw new Error(`${def.name}: belongsTo field ${rel.field} is not declared`);
  }
  return def;
}

function checkField(resource: string, name: string, field: FieldDef): void {
  if (field.type === 'enum' && (!field.values || field.values.length === 0)) throw new Error(`${resource}.${name}: enum needs values`);
  if (field.required && field.default !== undefined) throw new Error(`${resource}.${name}: a required field has no default`);
  if (field.searchable && field.type !== 'string') throw new Error(`${resource}.${name}: only string fields are searchable`);
  if (field.hidden && (field.writeOnly || field.filterable || field.sortable)) throw new Error(`${resource}.${name}: a hidden field is neither writable nor queryable`);
}

export function defineApp(def: AppDef): AppDef {
  const names = new Set(def.resources.map((r) => r.name));
  if (!names.has(def.users)) throw new Error(`defineApp: users resource "${def.users}" is not defined`);
  checkUsers(def.resources.find((r) => r.name === def.users)!);
  // Nested routes are generated one level deep only (`/parents/{id}/children`), so the spec's
  // two-to-three level bound (§2) holds by construction; deeper relations use a filter instead.
  for (const r of def.resources) {
    for (const rel of r.belongsTo ?? []) {
      if (!names.has(rel.resource)) throw new Error(`${r.name}: belongsTo unknown resource ${rel.resource}`);
    }
  }
  return def;
}

/** Field builders keep definitions short: `f.string({ required: true })`. */
export const f = {
  string: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'string', maxLength: 1000, ...o }),
  email: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'email', maxLength: 254, ...o }),
  uuid: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'uuid', ...o }),
  integer: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'integer', ...o }),
  boolean: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'boolean', ...o }),
  enum: (values: readonly string[], o: Omit<FieldDef, 'type' | 'values'> = {}): FieldDef => ({ type: 'enum', values, ...o }),
  timestamp: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'timestamp', ...o }),
  money: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'money', ...o }),
  strings: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'string[]', maxItems: 100, maxLength: 100, ...o }),
  object: (o: Omit<FieldDef, 'type'> = {}): FieldDef => ({ type: 'object', ...o }),
};

/** The users resource stands behind every credential: logins find a user by `email`, and a credential acts with its user's `role`. */
function checkUsers(users: ResourceDef): void {
  const { email, role } = users.fields;
  if (email?.type !== 'email') {
    throw new Error(`defineApp: the users resource "${users.name}" needs an email field, f.email(): logins (POST /sessions) find a user by it`);
  }
  if (role?.type !== 'enum' && role?.type !== 'string') {
    throw new Error(
      `defineApp: the users resource "${users.name}" needs a role field, f.enum([...your roles]): a credential acting for a user has that user's role, which permissions grant`,
    );
  }
}
