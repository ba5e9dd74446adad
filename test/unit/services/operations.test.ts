// The runner of asynchronous actions on a core of its own (no HTTP, no embedded worker): claims, the lease, settling, the hold, the bound of an attempt, SKIP LOCKED between runners, the drain; SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { fromEnv, resolveConfig } from '../../../src/config/config.js';
import { defineApp, defineResource, f } from '../../../src/model/define.js';
import { SYSTEM } from '../../../src/model/principal.js';
import type { PerformContext, StoredRecord } from '../../../src/index.js';
import { openCore, type Core } from '../../../src/runtime/core.js';
import { DEFAULT_OPERATION_TIMEOUT_MS, OperationRunner, type RunnerLog } from '../../../src/services/operations.js';
import { FakeClock, TEST_PASSWORD_COST } from '../../support/harness.js';
import { createTestDatabase, PG_URL, type TestDatabase } from '../../support/pg.js';

const ADMIN_ONLY = { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] };

/** What the jobs' `perform` does, set by each test; every call is recorded. */
let perform: (job: StoredRecord, ctx: PerformContext) => Promise<Record<string, unknown>> = async () => ({ status: 'done' });
let calls: Array<{ id: string; ctx: PerformContext }> = [];

const users = defineResource({
  name: 'users',
  singular: 'user',
  fields: { email: f.email({ required: true, unique: true }), role: f.enum(['admin', 'customer'], { default: 'customer' }) },
  permissions: ADMIN_ONLY,
});
const jobs = defineResource({
  name: 'jobs',
  singular: 'job',
  fields: { status: f.enum(['queued', 'done', 'dropped'], { default: 'queued' }) },
  permissions: ADMIN_ONLY,
  transitions: { status: { queued: ['done', 'dropped'], done: [], dropped: [] } },
  stateEvents: { status: { done: 'job.done' } },
  actions: {
    work: {
      method: 'POST',
      status: 202,
      allow: ['admin'],
      when: (job) => job.status === 'queued',
      perform: (job, ctx) => {
        calls.push({ id: String(job.id), ctx });
        return perform(job, ctx);
      },
    },
  },
});
const app = defineApp({ resources: [users, jobs], users: 'users' });

/** Collects what the runner logs. */
function recordingLog(): RunnerLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (_d, m) => void lines.push(`warn ${m}`), error: (_d, m) => void lines.push(`error ${m}`) };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

for (const store of ['sqlite', ...(PG_URL ? ['postgres'] : [])] as const) {
  describe(`the operation runner (${store})`, () => {
    let core: Core;
    let db: TestDatabase | undefined;
    const clock = new FakeClock();
    const runner = (options: { leaseMs?: number; concurrency?: number; maxAttempts?: number; timeoutMs?: number } = {}): OperationRunner =>
      new OperationRunner({ store: core.store, services: core.services, clock: clock.now, log: recordingLog(), ...options });
    /** A queued job with its operation, as a 202 request leaves them. */
    const queued = async (): Promise<{ job: string; operation: StoredRecord }> => {
      const job = (await core.services.create({ principal: SYSTEM }, 'jobs', {})).record.id;
      const result = await core.services.runAction({ principal: SYSTEM }, 'jobs', job, 'work');
      assert.ok(result.operation);
      return { job, operation: result.operation };
    };
    const operation = async (id: string): Promise<StoredRecord> => (await core.store.get('operations', id))!;
    const job = async (id: string): Promise<StoredRecord> => (await core.store.get('jobs', id))!;
    const doneEvents = async (id: string): Promise<number> => {
      if (store === 'postgres') await (core.store as { sequenceEvents?: () => Promise<number> }).sequenceEvents?.();
      return (await core.store.listEvents(0, 100_000)).filter((e) => e.object_id === id && e.type === 'job.done').length;
    };

    before(async () => {
      db = store === 'postgres' ? await createTestDatabase() : undefined;
      const config = resolveConfig({ databaseUrl: db?.url ?? 'sqlite::memory:', seed: false, secret: 'operations', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' });
      core = await openCore(config, { appDef: app, logger: false, clock: clock.now });
    });
    afterEach(async () => {
      perform = async () => ({ status: 'done' });
      calls = [];
      // Nothing a test left due may leak into the next one.
      await runner().runDue(1000);
      calls = [];
    });
    after(async () => {
      await core.close();
      await db?.drop();
    });

    it('the request queues one operation due at once; a second request while it is processing is 409 INVALID_STATE', async () => {
      const { job: id, operation: op } = await queued();
      assert.equal(op.status, 'processing');
      assert.equal(op.resource, 'jobs');
      assert.equal(op.object_id, id);
      assert.equal(op.action, 'work');
      assert.equal(op.attempts, 0);
      assert.equal(op.next_attempt_at, clock.now().toISOString());
      await assert.rejects(core.services.runAction({ principal: SYSTEM }, 'jobs', id, 'work'), {
        code: 'INVALID_STATE',
        message: `The job's work ${op.id} is processing; the job cannot change until it has finished.`,
      });
      // A request that changes nothing writes no event of the object: the hold alone moves its version (its links changed).
      assert.equal((await job(id)).version, 2);
      if (store === 'postgres') await (core.store as { sequenceEvents?: () => Promise<number> }).sequenceEvents?.();
      assert.deepEqual(
        (await core.store.listEvents(0, 100_000)).filter((e) => e.object_id === id).map((e) => e.type),
        ['job.created'],
      );
    });

    it('runDue performs it with the operation id as idempotency key, applies the changes through the update path (job.done) and marks it succeeded', async () => {
      const { job: id, operation: op } = await queued();
      assert.equal(await runner().runDue(10), 1);
      assert.deepEqual(
        calls.map((c) => c.id),
        [id],
      );
      const { signal, ...rest } = calls[0]!.ctx;
      assert.deepEqual(rest, { now: clock.now().toISOString(), idempotencyKey: op.id, attempt: 1 });
      assert.ok(signal instanceof AbortSignal);
      assert.equal(signal.aborted, false);
      const done = await operation(op.id);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.error, null);
      assert.equal(done.attempts, 1);
      assert.equal(done.next_attempt_at, null);
      assert.equal((await job(id)).status, 'done');
      assert.equal(await doneEvents(id), 1);
      assert.equal(await runner().runDue(10), 0, 'nothing is due any more');
    });

    it('a perform that throws fails the operation with its message; the object is left as it was', async () => {
      perform = async () => {
        throw new Error('provider said no');
      };
      const log = recordingLog();
      const r = new OperationRunner({ store: core.store, services: core.services, clock: clock.now, log });
      const { job: id, operation: op } = await queued();
      assert.equal(await r.runDue(10), 1);
      const failed = await operation(op.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error, 'provider said no');
      assert.equal((await job(id)).status, 'queued');
      assert.deepEqual(log.lines, ['warn an operation failed']);
    });

    it('while it is performed the operation holds the object: a change, a delete or an action of it is 409 INVALID_STATE naming the operation', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      perform = async () => {
        await gate;
        return { status: 'done' };
      };
      const { job: id, operation: op } = await queued();
      const running = runner().runDue(10);
      while (calls.length === 0) await settle();
      const refusals = [
        () => core.services.update({ principal: SYSTEM }, 'jobs', id, 'patch', { status: 'dropped' }),
        () => core.services.update({ principal: SYSTEM }, 'jobs', id, 'replace', {}),
        () => core.services.remove({ principal: SYSTEM }, 'jobs', id),
        () => core.services.runAction({ principal: SYSTEM }, 'jobs', id, 'work'),
      ];
      for (const refused of refusals) {
        await assert.rejects(refused(), (err: { code: string; message: string; details: unknown }) => {
          assert.equal(err.code, 'INVALID_STATE');
          assert.equal(err.message, `The job's work ${op.id} is processing; the job cannot change until it has finished.`);
          assert.deepEqual(err.details, [{ field: 'work', message: "is processing; GET the job's work to follow it", value: op.id }]);
          return true;
        });
      }
      // The links say so too: no POST action while held.
      assert.deepEqual((await core.services.get({ principal: SYSTEM }, 'jobs', id)).access.actions, []);
      release();
      assert.equal(await running, 1);
      assert.equal((await operation(op.id)).status, 'succeeded');
      assert.equal((await job(id)).status, 'done');
      assert.equal(await doneEvents(id), 1);
      // Settled, the hold is gone: the job changes again.
      assert.equal((await core.services.update({ principal: SYSTEM }, 'jobs', id, 'patch', {})).record.status, 'done');
    });

    it('a failed operation releases its hold: the object can be changed and the action requested again', async () => {
      perform = async () => {
        throw new Error('provider said no');
      };
      const { job: id, operation: op } = await queued();
      assert.deepEqual((await core.services.get({ principal: SYSTEM }, 'jobs', id)).access.actions, []);
      assert.equal(await runner().runDue(10), 1);
      assert.equal((await operation(op.id)).status, 'failed');
      assert.deepEqual((await core.services.get({ principal: SYSTEM }, 'jobs', id)).access.actions, ['work']);
      perform = async () => ({ status: 'done' });
      const again = await core.services.runAction({ principal: SYSTEM }, 'jobs', id, 'work');
      assert.notEqual(again.operation?.id, op.id);
      assert.equal(await runner().runDue(10), 1);
      assert.equal((await job(id)).status, 'done');
    });

    it('changes the update path refuses (a transition not allowed) fail the operation and release the hold', async () => {
      perform = async () => ({ status: 'queued-forever' });
      const { job: id, operation: op } = await queued();
      assert.equal(await runner().runDue(10), 1);
      const failed = await operation(op.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error, 'status cannot move from queued to queued-forever.');
      perform = async () => ({ status: 'dropped' });
      await core.services.runAction({ principal: SYSTEM }, 'jobs', id, 'work');
      assert.equal(await runner().runDue(10), 1);
      assert.equal((await job(id)).status, 'dropped');
    });

    it('an attempt longer than timeoutMs aborts its signal and is tried again under the same key; past maxAttempts the operation fails and its hold ends', async () => {
      const signals: AbortSignal[] = [];
      const keys: string[] = [];
      // One perform stops when aborted, as a provider's client given the signal does; the next ignores it.
      perform = (_job, ctx) => {
        signals.push(ctx.signal);
        keys.push(ctx.idempotencyKey);
        if (signals.length % 2 === 1) return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
        return new Promise(() => undefined);
      };
      const log = recordingLog();
      const r = new OperationRunner({ store: core.store, services: core.services, clock: clock.now, log, timeoutMs: 50, maxAttempts: 2 });
      const { job: id, operation: op } = await queued();
      const started = Date.now();
      assert.equal(await r.runDue(10), 1);
      assert.ok(Date.now() - started < 5000, 'the runner did not wait for the perform');
      assert.equal(signals[0]!.aborted, true);
      const again = await operation(op.id);
      assert.equal(again.status, 'processing', 'a timed-out attempt is not a failed payment: the provider may have carried it out');
      assert.equal(again.attempts, 1);
      // Held still: nothing may change the job while its outcome is unknown.
      assert.deepEqual((await core.services.get({ principal: SYSTEM }, 'jobs', id)).access.actions, []);
      // Not due before its backoff (the bound, 50 ms); then the second (last) attempt, under the same key.
      assert.equal(await r.runDue(10), 0);
      clock.advance(60);
      assert.equal(await r.runDue(10), 1);
      assert.equal(signals[1]!.aborted, true);
      assert.deepEqual(keys, [op.id, op.id]);
      const failed = await operation(op.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error, 'The work did not finish within 50 ms. It was tried 2 times.');
      assert.equal(failed.attempts, 2);
      assert.equal((await job(id)).status, 'queued');
      assert.deepEqual(log.lines, ['warn an operation attempt timed out; it is tried again', 'warn an operation failed']);
      // The hold is released: the job may be worked again.
      assert.deepEqual((await core.services.get({ principal: SYSTEM }, 'jobs', id)).access.actions, ['work']);
    });

    it('the bound is CANON_OPERATION_TIMEOUT_MS (10 s by default), shorter than the lease', () => {
      assert.equal(DEFAULT_OPERATION_TIMEOUT_MS, 10_000);
      assert.equal(resolveConfig().operationTimeoutMs, DEFAULT_OPERATION_TIMEOUT_MS);
      assert.equal(resolveConfig(fromEnv({ CANON_OPERATION_TIMEOUT_MS: '2500' })).operationTimeoutMs, 2500);
      assert.throws(() => fromEnv({ CANON_OPERATION_TIMEOUT_MS: '2s' }), /CANON_OPERATION_TIMEOUT_MS must be a non-negative integer/);
      assert.throws(() => resolveConfig(fromEnv({ CANON_OPERATION_TIMEOUT_MS: '0' })), /CANON_OPERATION_TIMEOUT_MS must be at least 1/);
      assert.throws(
        () => resolveConfig(fromEnv({ CANON_OPERATION_TIMEOUT_MS: '30000' })),
        /CANON_WORKER_LEASE_MS \(30000\) must be longer than CANON_OPERATION_TIMEOUT_MS \(30000\)/,
      );
    });

    it('the lease: an operation claimed by a runner that died is claimed again once the lease ran out, with the same idempotency key', async () => {
      const { job: id, operation: op } = await queued();
      const dead = runner({ leaseMs: 10_000 });
      const claimed = await dead.claim(10);
      assert.deepEqual(
        claimed.map((c) => c.operation.id),
        [op.id],
      );
      assert.equal(claimed[0]!.object?.id, id);
      const held = await operation(op.id);
      assert.equal(held.attempts, 1);
      assert.equal(held.next_attempt_at, new Date(clock.now().getTime() + 10_000).toISOString());
      // Within the lease nobody else takes it.
      const alive = runner({ leaseMs: 10_000 });
      clock.advance(9);
      assert.equal(await alive.runDue(10), 0);
      assert.equal(calls.length, 0);
      clock.advance(2);
      assert.equal(await alive.runDue(10), 1);
      assert.equal(calls.length, 1);
      assert.deepEqual({ ...calls[0]!.ctx, signal: undefined }, { now: clock.now().toISOString(), idempotencyKey: op.id, attempt: 2, signal: undefined });
      assert.equal((await operation(op.id)).status, 'succeeded');
      // Had the first runner only been slow, its late finish changes nothing: the operation is settled, the job done once.
      await dead.execute(claimed[0]!);
      assert.equal((await operation(op.id)).status, 'succeeded');
      assert.equal((await operation(op.id)).attempts, 2);
      assert.equal(await doneEvents(id), 1);
    });

    it('the default lease is 30 s', async () => {
      const { operation: op } = await queued();
      await runner().claim(10);
      assert.equal((await operation(op.id)).next_attempt_at, new Date(clock.now().getTime() + 30_000).toISOString());
      clock.advance(29);
      assert.equal(await runner().runDue(10), 0);
      clock.advance(2);
      assert.equal(await runner().runDue(10), 1);
    });

    it('an operation whose attempts never finished is failed after maxAttempts rather than claimed forever', async () => {
      const { job: id, operation: op } = await queued();
      const r = runner({ leaseMs: 1000, maxAttempts: 2 });
      assert.equal((await r.claim(10)).length, 1);
      clock.advance(2);
      assert.equal((await r.claim(10)).length, 1);
      clock.advance(2);
      assert.deepEqual(await r.claim(10), []);
      const abandoned = await operation(op.id);
      assert.equal(abandoned.status, 'failed');
      assert.equal(abandoned.error, 'Abandoned after 2 attempts that did not finish.');
      assert.equal((await job(id)).status, 'queued');
      assert.equal(calls.length, 0);
    });

    it('two runners polling at once never perform one operation twice, nor at the same time', async () => {
      const performing = new Set<string>();
      const overlaps: string[] = [];
      perform = async (j) => {
        if (performing.has(String(j.id))) overlaps.push(String(j.id));
        performing.add(String(j.id));
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 10)));
        performing.delete(String(j.id));
        return { status: 'done' };
      };
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push((await queued()).job);
      const a = runner({ concurrency: 4 });
      const b = runner({ concurrency: 4 });
      a.start(5);
      b.start(5);
      const deadline = Date.now() + 20_000;
      while (calls.length < ids.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      await Promise.all([a.stop(), b.stop()]);
      assert.deepEqual(overlaps, []);
      assert.deepEqual(calls.map((c) => c.id).sort(), [...ids].sort(), 'each operation performed exactly once');
      for (const id of ids) assert.equal((await job(id)).status, 'done');
    });

    it('the loop keeps at most `concurrency` performs in flight, wake() looks at once, and stop() waits for what is under way', async () => {
      let inFlight = 0;
      let most = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      perform = async () => {
        most = Math.max(most, ++inFlight);
        await gate;
        inFlight--;
        return { status: 'done' };
      };
      const ops: string[] = [];
      for (let i = 0; i < 5; i++) ops.push((await queued()).operation.id);
      // A long interval: only wake() makes it look again.
      const r = runner({ concurrency: 2 });
      r.start(60_000);
      while (calls.length < 2) await settle();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(calls.length, 2, 'no more than two at once');
      release();
      // Finished performs free their slots and the backlog is claimed without waiting for the interval.
      const deadline = Date.now() + 10_000;
      while (calls.length < 5 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(calls.length, 5);
      assert.equal(most, 2);
      const late = await queued();
      r.wake();
      while (calls.length < 6 && Date.now() < deadline) await settle();
      // stop() returns only once the perform under way has settled its operation.
      await r.stop();
      assert.equal((await operation(late.operation.id)).status, 'succeeded');
      for (const id of ops) assert.equal((await operation(id)).status, 'succeeded');
    });
  });
}
