// The idempotent execution use case without any transport (src/services/idempotent.ts): replay, 409 while running, 422 for another request, expiry, scoping by principal; SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resolveConfig } from '../../../src/config/config.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import type { Principal } from '../../../src/model/principal.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import type { StoredResponse } from '../../../src/services/idempotency.js';
import { IdempotentExecution, type IdempotentRequest, type KeyedRun } from '../../../src/services/idempotent.js';
import type { Created, Within } from '../../../src/services/resource-service.js';
import { FakeClock, TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_URL, type TestDatabase } from '../../support/pg.js';

const ADMIN_ONLY = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };
const users = defineResource({
  name: 'users',
  singular: 'user',
  fields: { email: f.email({ required: true, unique: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }) },
  permissions: ADMIN_ONLY,
});
const notes = defineResource({ name: 'notes', singular: 'note', fields: { text: f.string({ required: true, maxLength: 20 }) }, permissions: ADMIN_ONLY });
const app = defineApp({ resources: [users, notes], users: 'users' });

const TTL_SECONDS = 60;
const alice: Principal = { kind: 'api_key', credentialId: 'key-alice', userId: null, role: 'admin', scopes: [] };
const bob: Principal = { kind: 'api_key', credentialId: 'key-bob', userId: null, role: 'admin', scopes: [] };

for (const store of ['sqlite', ...(PG_URL ? ['postgres'] : [])] as const) {
  describe(`idempotent execution as a use case (${store})`, () => {
    let core: Core;
    let db: TestDatabase | undefined;
    let execution: IdempotentExecution;
    const clock = new FakeClock();
    /** How often each request's change ran (a replay runs nothing). */
    let runs = 0;

    /** A create of a note as a transport would hand it over: the change, and its response rendered once. */
    const createNote = (key: string | undefined, body: unknown, principal: Principal = alice): IdempotentRequest<Created> => ({
      key,
      principal,
      fingerprint: { method: 'POST', url: '/notes', body },
      run: (within) => {
        runs++;
        return core.services.create({ principal }, 'notes', body, undefined, within);
      },
      render: (created): StoredResponse => ({
        status: 201,
        headers: { location: `/notes/${created.record.id}` },
        body: JSON.stringify({ id: created.record.id, text: created.record.text }),
      }),
    });
    const count = async (): Promise<number> => (await core.store.list('notes', { where: [], orderBy: [{ path: 'id', desc: false }], limit: 1000 })).rows.length;

    before(async () => {
      db = store === 'postgres' ? await createTestDatabase() : undefined;
      const config = resolveConfig({
        databaseUrl: db?.url ?? 'sqlite::memory:',
        seed: false,
        secret: 'idempotent',
        passwordCost: TEST_PASSWORD_COST,
        logLevel: 'silent',
        idempotencyTtlSeconds: TTL_SECONDS,
      });
      core = await openCore(config, { appDef: app, logger: false, clock: clock.now });
      execution = new IdempotentExecution(core.idempotency);
    });
    after(async () => {
      await core.close();
      await db?.drop();
    });

    it('without a key runs the change and records nothing', async () => {
      runs = 0;
      const first = await execution.execute(createNote(undefined, { text: 'a' }));
      const second = await execution.execute(createNote(undefined, { text: 'a' }));
      assert.equal(runs, 2);
      assert.equal(first.replayed, false);
      assert.equal(second.replayed, false);
      assert.notEqual(first.response.body, second.response.body);
    });

    it('a repeat gets the stored response, replayed, and the change ran once; key order in the body does not matter', async () => {
      runs = 0;
      const before = await count();
      const first = await execution.execute(createNote('k-repeat', { text: 'once' }));
      const again = await execution.execute(createNote('k-repeat', { text: 'once' }));
      assert.equal(runs, 2, 'the repeat enters its transaction, where the stored response ends it');
      assert.equal(await count(), before + 1);
      assert.deepEqual(first, { response: first.response, replayed: false });
      assert.deepEqual(again, { response: first.response, replayed: true });
    });

    it('the key with another request is 422 IDEMPOTENCY_KEY_REUSED, and nothing is written', async () => {
      await execution.execute(createNote('k-other', { text: 'one' }));
      const before = await count();
      await assert.rejects(execution.execute(createNote('k-other', { text: 'two' })), { code: 'IDEMPOTENCY_KEY_REUSED' });
      assert.equal(await count(), before);
    });

    it('a body refused before the transaction: 422 REUSED when the key holds another request, else the validation error itself', async () => {
      await execution.execute(createNote('k-invalid', { text: 'fine' }));
      // Too long for the field: refused by validation before the transaction looks the key up.
      await assert.rejects(execution.execute(createNote('k-invalid', { text: 'x'.repeat(30) })), { code: 'IDEMPOTENCY_KEY_REUSED' });
      await assert.rejects(execution.execute(createNote('k-fresh-invalid', { text: 'x'.repeat(30) })), { code: 'VALIDATION_ERROR' });
    });

    it('a repeat while the first still runs: 409 IDEMPOTENCY_KEY_IN_USE with a retry delay where transactions run side by side, else the replay once it has committed', async () => {
      let release!: () => void;
      let entered!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const slow = createNote('k-running', { text: 'slow' });
      const slowRun = slow.run;
      slow.run = async (within) =>
        slowRun({
          first: async (tx) => {
            await within!.first(tx);
            entered();
            await gate;
          },
          last: (tx, result) => within!.last(tx, result),
        });
      const before = await count();
      const first = execution.execute(slow);
      // The first request holds the key once its transaction looked it up.
      await inside;
      const repeat = execution.execute(createNote('k-running', { text: 'slow' })).then(
        (outcome) => ({ outcome }),
        (err: { code?: string; facts?: { retryAfterSeconds?: number } }) => ({ err }),
      );
      if (store === 'postgres') {
        // Its own transaction begins at once and finds the key held in this process.
        const refused = await repeat;
        assert.ok('err' in refused, JSON.stringify(refused));
        assert.equal(refused.err.code, 'IDEMPOTENCY_KEY_IN_USE');
        assert.equal(refused.err.facts?.retryAfterSeconds, 1);
        release();
      } else {
        // SQLite has one writer: the repeat's transaction begins once the first's has committed, which may be
        // before the first request let go of its key (409) or after (the replay). Never a second change.
        release();
        const settled = await repeat;
        if ('err' in settled) assert.equal(settled.err.code, 'IDEMPOTENCY_KEY_IN_USE');
        else assert.deepEqual(settled.outcome, { response: (await first).response, replayed: true });
      }
      const done = await first;
      assert.equal(done.replayed, false);
      assert.deepEqual(await execution.execute(createNote('k-running', { text: 'slow' })), { response: done.response, replayed: true });
      assert.equal(await count(), before + 1);
    });

    it('keys are scoped to the principal: another caller with the same key runs its own request', async () => {
      const mine = await execution.execute(createNote('k-shared', { text: 'alice' }));
      const theirs = await execution.execute(createNote('k-shared', { text: 'bob' }, bob));
      assert.equal(theirs.replayed, false);
      assert.notEqual(theirs.response.body, mine.response.body);
    });

    it('an expired record gives way: the key runs the request again', async () => {
      const first = await execution.execute(createNote('k-expiring', { text: 'old' }));
      clock.advance(TTL_SECONDS + 1);
      const later = await execution.execute(createNote('k-expiring', { text: 'new' }));
      assert.equal(later.replayed, false);
      assert.notEqual(later.response.body, first.response.body);
      assert.match(later.response.body, /"text":"new"/);
    });

    it('a front end that runs the change itself (begin, run, outcome): the response is made inside the transaction, which it may read; a repeat’s run is null, the replay its outcome', async () => {
      const body = { text: 'inside' };
      const keyed = (): KeyedRun<Created> =>
        execution.begin<Created>({
          key: 'k-begin',
          principal: alice,
          fingerprint: { method: 'POST', url: '/graphql', body },
          // Renders asynchronously, from the change's own transaction: it sees the row before it commits.
          render: async (created, tx) => {
            assert.ok(tx, 'a keyed response is made inside the change’s transaction');
            const row = await tx.get('notes', created.record.id);
            return { status: 200, headers: {}, body: JSON.stringify({ data: { createNote: { text: row?.text } } }) };
          },
        });
      const change = (within: Within<Created>): Promise<Created> => core.services.create({ principal: alice }, 'notes', body, undefined, within);
      const first = keyed();
      try {
        const created = await first.run(change);
        assert.equal(created?.record.text, 'inside');
        assert.deepEqual(first.outcome(), { response: { status: 200, headers: {}, body: '{"data":{"createNote":{"text":"inside"}}}' }, replayed: false });
      } finally {
        first.release();
      }
      const again = keyed();
      try {
        assert.equal(await again.run(change), null);
        assert.deepEqual(again.outcome(), { response: first.outcome()!.response, replayed: true });
      } finally {
        again.release();
      }
    });

    it('a malformed key is 400 before anything runs', async () => {
      runs = 0;
      await assert.rejects(execution.execute(createNote('bad\nkey', { text: 'x' })), { code: 'BAD_REQUEST' });
      assert.equal(runs, 0);
    });

    it('a run that never hands `within` to its transaction is a programming error, and stores nothing', async () => {
      const request = createNote('k-unhanded', { text: 'lost' });
      const real = request.run;
      request.run = () => real(undefined);
      await assert.rejects(execution.execute(request), /must hand `within` to its transaction/);
      // Nothing was stored under the key: a correct request with it runs.
      assert.equal((await execution.execute(createNote('k-unhanded', { text: 'lost' }))).replayed, false);
    });
  });
}
