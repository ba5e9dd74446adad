// Type tests of the definition API as app authors import it (src/index.ts): right definitions compile, wrong ones do not. Run by `npm run typetest` (tstyche).
import { describe, expect, test } from 'tstyche';
import {
  AppError,
  defineApp,
  defineResource,
  f,
  type ActionDef,
  type AppDef,
  type ErrorCode,
  type FieldDef,
  type HookContext,
  type HookServices,
  type Hooks,
  type PerformContext,
  type Permissions,
  type PrepareContext,
  type Principal,
  type ResourceDef,
  type Seeder,
  type StoredRecord,
  type VersionDef,
} from '../../src/index.js';

const permissions = { read: ['authenticated'], create: ['admin', 'owner'], update: ['admin', 'owner'], delete: ['admin'] };

const users = defineResource({
  name: 'users',
  singular: 'user',
  fields: {
    email: f.email({ required: true, unique: true, filterable: true }),
    role: f.enum(['admin', 'member'], { default: 'member', writableBy: ['admin'] }),
  },
  ownership: { field: 'id' },
  permissions,
});

describe('correct definitions', () => {
  test('a resource with fields, relations, ownership, actions, transitions and every hook compiles', () => {
    const tasks = defineResource({
      name: 'tasks',
      singular: 'task',
      fields: {
        user_id: f.uuid({ createOnly: true, references: 'users', filterable: true }),
        title: f.string({ required: true, minLength: 1, maxLength: 200, sortable: true, searchable: true }),
        status: f.enum(['open', 'done'], { default: 'open', filterable: true }),
        estimate: f.integer({ minimum: 0, maximum: 100 }),
        price: f.money({ filterable: true }),
        tags: f.strings({ default: [] }),
        done_at: f.timestamp({ readOnly: true }),
        archived: f.boolean({ default: false }),
        secret: f.string({ hidden: true }),
        meta: f.object(),
      },
      belongsTo: [{ resource: 'users', field: 'user_id', nested: true, onDelete: 'cascade' }],
      ownership: { field: 'user_id' },
      permissions,
      transitions: { status: { open: ['done'], done: ['open'] } },
      stateEvents: { status: { done: 'task.done' } },
      actions: {
        complete: { method: 'POST', allow: ['admin', 'owner'], when: (t) => t.status === 'open', run: (_t, ctx) => ({ status: 'done', done_at: ctx.now }) },
        summary: { method: 'GET', allow: ['authenticated'], view: (t) => ({ id: t.id, title: t.title }) },
        archive: {
          method: 'POST',
          status: 202,
          allow: ['admin'],
          async perform(t, ctx) {
            expect(ctx).type.toBe<PerformContext>();
            expect(ctx.idempotencyKey).type.toBe<string>();
            expect(ctx.attempt).type.toBe<number>();
            return { archived: t.status === 'done' };
          },
        },
      },
      hooks: {
        async prepare(values, ctx) {
          expect(values).type.toBe<Record<string, unknown>>();
          expect(ctx).type.toBe<PrepareContext>();
          expect(ctx.hashPassword).type.toBe<(password: string) => Promise<string>>();
          return values;
        },
        beforeCreate(values, ctx) {
          expect(ctx).type.toBe<HookContext>();
          expect(ctx.principal).type.toBe<Principal>();
          return { ...values, user_id: ctx.principal.userId };
        },
        async beforeUpdate(values, current, ctx) {
          expect(current).type.toBe<StoredRecord>();
          expect(ctx.services).type.toBe<HookServices>();
          return values;
        },
        async afterWrite(record, kind, ctx) {
          expect(kind).type.toBe<'created' | 'updated' | 'deleted'>();
          if (!ctx.cascading) await ctx.services.update('users', String(record.user_id), {});
        },
        beforeDelete(current) {
          if (current.status === 'open') throw new AppError('INVALID_STATE', 'Finish it first.');
        },
      },
    });
    expect(tasks).type.toBe<ResourceDef>();
    const app = defineApp({
      resources: [users, tasks],
      users: 'users',
      async seed(seed) {
        expect(seed).type.toBe<Seeder>();
        const ana = await seed.create('users', { email: 'ana@example.com' });
        await seed.as(ana.id).create('tasks', { title: 'First' });
      },
    });
    expect(app).type.toBe<AppDef>();
  });

  test('the field builders return field definitions and take the options of FieldDef', () => {
    expect(f.string({ pattern: '^[A-Z]{3}$', description: 'a code' })).type.toBe<FieldDef>();
    expect(f.enum(['a', 'b'] as const)).type.toBe<FieldDef>();
    expect(f.uuid).type.toBeCallableWith();
  });

  test('hook and action types are exported for hooks written apart from their resource', () => {
    const recount = async (task: StoredRecord, ctx: HookContext): Promise<number> => (await ctx.services.list('tasks', { user_id: task.user_id })).length;
    expect(recount).type.toBeAssignableTo<(task: StoredRecord, ctx: HookContext) => Promise<number>>();
    expect<Parameters<NonNullable<Hooks['afterWrite']>>[1]>().type.toBe<'created' | 'updated' | 'deleted'>();
    expect<ActionDef['method']>().type.toBe<'POST' | 'GET'>();
    expect<keyof Permissions>().type.toBe<'read' | 'create' | 'update' | 'delete'>();
  });

  test('an app with versions and the declarative changes between them compiles', () => {
    const versions: VersionDef[] = [
      { name: 'v1', date: '2026-01-01', changes: [{ description: 'login became email', resource: 'users', fields: [{ rename: { from: 'login', to: 'email' } }] }] },
      { name: 'v2', date: '2026-03-01' },
    ];
    expect(defineApp({ resources: [users], users: 'users', versions })).type.toBe<AppDef>();
  });

  test('AppError takes a catalogued code', () => {
    expect(new AppError('NOT_FOUND', 'No such task.')).type.toBe<AppError>();
    expect<'VALIDATION_ERROR'>().type.toBeAssignableTo<ErrorCode>();
    expect(new AppError('VALIDATION_ERROR', 'Bad.', { details: [{ field: 'title', message: 'is empty' }] })).type.toBe<AppError>();
  });
});

describe('wrong field builder options do not compile', () => {
  test('an unknown option', () => {
    expect(f.string({ requird: true })).type.toRaiseError('Object literal may only specify known properties');
  });
  test('an option of the wrong type', () => {
    expect(f.string({ required: 'yes' })).type.toRaiseError("Type 'string' is not assignable to type 'boolean | undefined'");
    expect(f.integer({ minimum: '1' })).type.toRaiseError("Type 'string' is not assignable to type 'number'");
    expect(f.uuid({ references: ['users'] })).type.toRaiseError("not assignable to type 'string'");
  });
  test('the type, which the builder decides', () => {
    expect(f.string({ type: 'integer' })).type.toRaiseError('Object literal may only specify known properties');
  });
  test('enum values given as an option instead of the first argument', () => {
    expect(f.enum({ values: ['a'] })).type.toRaiseError();
    expect(f.enum(['a'], { values: ['b'] })).type.toRaiseError('Object literal may only specify known properties');
  });
});

describe('wrong hook signatures do not compile', () => {
  const base = { name: 'tasks', singular: 'task', fields: { title: f.string() }, permissions };

  test('beforeCreate returning a number', () => {
    expect(defineResource({ ...base, hooks: { beforeCreate: () => 42 } })).type.toRaiseError("Type 'number' is not assignable");
  });
  test('beforeUpdate returning a string', () => {
    expect(defineResource({ ...base, hooks: { beforeUpdate: async () => 'done' } })).type.toRaiseError("Type 'string' is not assignable");
  });
  test('prepare returning nothing', () => {
    expect(defineResource({ ...base, hooks: { prepare: () => undefined } })).type.toRaiseError("Type 'undefined' is not assignable");
  });
  test('afterWrite with a kind that does not exist', () => {
    expect(defineResource({ ...base, hooks: { afterWrite: (_record: StoredRecord, _kind: 'removed') => undefined } })).type.toRaiseError(
      /_kind: "removed"\) => undefined' is not assignable to type '\(record: StoredRecord, kind: "created" \| "updated" \| "deleted"/,
    );
    expect(
      defineResource({
        ...base,
        hooks: {
          afterWrite(_record, kind) {
            if (kind === 'removed') return;
          },
        },
      }),
    ).type.toRaiseError('This comparison appears to be unintentional');
  });
  test('afterWrite that handles only some kinds (hooks are properties, so their parameters are checked strictly)', () => {
    expect(defineResource({ ...base, hooks: { afterWrite: (_record: StoredRecord, _kind: 'created') => undefined } })).type.toRaiseError();
  });
  test('afterWrite taking a context that is not a HookContext', () => {
    expect(defineResource({ ...base, hooks: { afterWrite: (_record: StoredRecord, _kind: 'created', ctx: { tx: unknown }) => void ctx } })).type.toRaiseError();
  });
  test('beforeDelete taking the values of a create instead of the current record', () => {
    expect(defineResource({ ...base, hooks: { beforeDelete: (current: StoredRecord, ctx: HookContext, extra: string) => void [current, ctx, extra] } })).type.toRaiseError();
  });
  test('an action with an unknown method, a grant that is not a list, or a run returning a number', () => {
    expect(defineResource({ ...base, actions: { archive: { method: 'PUT', allow: ['admin'], run: () => ({}) } } })).type.toRaiseError('Type \'"PUT"\' is not assignable');
    expect(defineResource({ ...base, actions: { archive: { method: 'POST', allow: 'admin', run: () => ({}) } } })).type.toRaiseError(
      "Type 'string' is not assignable to type 'string[]'",
    );
    expect(defineResource({ ...base, actions: { archive: { method: 'POST', allow: ['admin'], run: () => 1 } } })).type.toRaiseError("Type 'number' is not assignable");
  });
  test('a seed that is not async', () => {
    expect(defineApp({ resources: [users], users: 'users', seed: (_seeder: Seeder) => undefined })).type.toRaiseError("Type 'undefined' is not assignable");
  });
});

describe('wrong permission and ownership shapes do not compile', () => {
  const base = { name: 'tasks', singular: 'task', fields: { user_id: f.uuid() } };

  test('a grant that is a string instead of a list', () => {
    expect(defineResource({ ...base, permissions: { read: 'admin', create: ['admin'], update: ['admin'], delete: ['admin'] } })).type.toRaiseError(
      "Type 'string' is not assignable to type 'string[]'",
    );
  });
  test('a missing operation', () => {
    expect(defineResource({ ...base, permissions: { read: ['admin'], create: ['admin'], update: ['admin'] } })).type.toRaiseError("Property 'delete' is missing");
  });
  test('an operation that does not exist', () => {
    expect(defineResource({ ...base, permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'], list: ['admin'] } })).type.toRaiseError(
      'Object literal may only specify known properties',
    );
  });
  test('no permissions at all', () => {
    expect(defineResource({ ...base })).type.toRaiseError("Property 'permissions' is missing");
  });
  test('ownership without its field, or a relation with an unknown onDelete', () => {
    expect(defineResource({ ...base, permissions, ownership: { through: 'projects' } })).type.toRaiseError();
    expect(defineResource({ ...base, permissions, belongsTo: [{ resource: 'users', field: 'user_id', onDelete: 'nullify' }] })).type.toRaiseError(
      'Type \'"nullify"\' is not assignable',
    );
  });
  test('a version change with a mapping that does not exist', () => {
    expect(
      defineApp({
        resources: [users],
        users: 'users',
        versions: [{ name: 'v1', date: '2026-01-01', changes: [{ description: 'x', resource: 'users', fields: [{ move: { from: 'a', to: 'b' } }] }] }],
      }),
    ).type.toRaiseError('Object literal may only specify known properties');
  });
  test('an app without its users resource', () => {
    expect(defineApp({ resources: [users] })).type.toRaiseError("Property 'users' is missing");
  });
  test('an AppError with a code outside the catalog', () => {
    expect(new AppError('TEAPOT', 'I am a teapot.')).type.toRaiseError('Argument of type \'"TEAPOT"\' is not assignable to parameter');
  });
});
