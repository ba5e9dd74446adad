// Use cases over every resource, each write in one transaction with its event: shared by REST and, later, GraphQL.
import { v7 as uuidv7 } from 'uuid';
import type { PasswordHasher } from '../auth/password-hasher.js';
import { SYSTEM, type Principal } from '../model/principal.js';
import { AppError, type ErrorDetail } from '../errors/app-error.js';
import { emitsEvents, newestVersion, resourceOf, type CompiledModel, type CompiledResource } from '../model/compile.js';
import type { ActionDef, HookContext, PrepareContext } from '../model/types.js';
import { validateBody, validateShape, writableFields } from '../model/validate.js';
import { actionInputSchema } from '../model/schema.js';
import { HOLD_FIELD, heldBy } from '../model/state-rule.js';
import { OPERATIONS } from '../platform/operations.js';
import type { Condition, ListQuery, LockMode, Reader, Store, EventRecord, StoredRecord, Tx } from '../store/types.js';
import { accessFor, ownerOf, ownershipMatters, owns, ownsKnown, type Loaded } from './access.js';
import { buildEvent } from './events.js';
import { assertNotHeld, assertPartsFree, lockParts, writeHold } from './holds.js';
import { HOOK_LIST_LIMIT, hookContext } from './hook-context.js';
import { applyMergePatch } from './merge-patch.js';
import { bumpOperation, newestOperation, queueOperation } from './operation-rows.js';
import { RecordingTx } from './recording-tx.js';
import { grantFor, none, ownerCondition, type GrantCheck } from './permissions.js';
import { readGrant, requireScope } from './refusals.js';
import { insertOrConflict, label, notFound, preconditionFailed, updateOrConflict, validation } from './resource-errors.js';
import type { ActionResult, Created, Ctx, ParentRef, Precondition, Within } from './service-types.js';
import { anyStoredChange, changedFields } from './views.js';

export type { Loaded };
export type { ActionResult, Created, Ctx, ParentRef, Precondition, Within };

/** The use cases over every resource: reads that refuse what the caller may not see, and writes each in one transaction with its event. */
export class ResourceService {
  constructor(
    private readonly store: Store,
    readonly model: CompiledModel,
    private readonly clock: () => Date,
    /** Hashes passwords for hooks (`ctx.hashPassword`), through the process's bounded queue. */
    private readonly passwords: Pick<PasswordHasher, 'hash'>,
    /** Called with a transaction's events once it has committed (the fan-out publishes them). */
    private readonly onCommit?: (events: readonly EventRecord[]) => void,
  ) {}

  /** Called after the commit of every request that queued an operation, so an in-process worker looks at once. */
  private readonly queuedListeners = new Set<() => void>();

  /** Subscribes to queued operations (the worker's wake-up); returns the way to unsubscribe. */
  onOperationQueued(listener: () => void): () => void {
    this.queuedListeners.add(listener);
    return () => this.queuedListeners.delete(listener);
  }

  /** The newest version's date: events are stored in its shape. */
  private get apiVersion(): string {
    return newestVersion(this.model).date;
  }

  /**
   * Runs `fn` in one store transaction and hands its events on after the commit, never before; in `joined` (a
   * transaction of `commit`, Ctx.joined) when given, whose commit hands them on.
   */
  private async transaction<T>(fn: (tx: Tx) => Promise<T>, joined?: Tx): Promise<T> {
    if (joined) return fn(joined);
    let recorder: RecordingTx | undefined;
    const result = await this.store.transaction((tx) => {
      // A retried transaction starts over with a fresh recorder.
      recorder = new RecordingTx(tx);
      return fn(recorder);
    });
    if (recorder && recorder.events.length > 0) this.onCommit?.(recorder.events);
    // After the commit, so the worker finds the operation when it looks.
    if (recorder?.queued) for (const listener of this.queuedListeners) listener();
    return result;
  }

  resource(name: string): CompiledResource {
    return resourceOf(this.model, name);
  }

  private now(): string {
    return this.clock().toISOString();
  }

  /**
   * Runs platform work (a password change) in one transaction with the hooks' helpers, so its
   * changes write their events and reach the fan-out like any other. Platform code alone gets the
   * transaction itself (for its internal tables); the hooks of resources never do.
   */
  /**
   * The one commit path for platform writes that are not resource operations (sessions, signing keys):
   * a recording transaction whose events, if any, are published after the commit like every other change.
   */
  commit<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction(fn);
  }

  async transact<T>(principal: Principal, fn: (ctx: HookContext, tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction((tx) => fn(this.hookContext({ principal }, tx, this.now()), tx));
  }

  /** Refuses a request its credential's scopes do not cover (src/services/refusals.ts). */
  private requireScope(ctx: Ctx, r: CompiledResource, access: 'read' | 'write'): void {
    requireScope(ctx.principal, r, access);
  }

  /**
   * Loads an object the principal may see; anything else is 404 so existence never leaks (DESIGN §8). With
   * `lock`, `reader` is the transaction, and the record is held in that mode until it ends (see LockMode).
   */
  private async loadVisible(ctx: Ctx, r: CompiledResource, id: string, reader: Reader, lock?: LockMode): Promise<Loaded> {
    const g = readGrant(ctx.principal, r);
    // Outside a transaction, a record the store keeps may answer: only one a read sent after the request arrived
    // vouches for (Store.cachedRecord with ctx.since), as on the lean read path (getNow).
    const kept = lock || reader !== this.store || ctx.since === undefined ? undefined : this.store.cachedRecord?.(r.name, id, ctx.since);
    const record = kept ?? (lock ? await (reader as Tx).lock(r.name, id, lock) : await reader.get(r.name, id));
    if (!record) throw notFound(r);
    return visible(ctx.principal, r, g, record, await owns(this.model, r, record, ctx.principal, reader));
  }

  async get(ctx: Ctx, name: string, id: string): Promise<Loaded> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'read');
    return this.loadVisible(ctx, r, id, this.store);
  }

  /** The store's stamp of what reads can see (Store.readStamp); undefined when the store cannot tell. */
  readStamp(since?: number): number | string | Promise<string> | undefined {
    return this.store.readStamp?.(since);
  }

  /**
   * `get` answered at once, without a promise, when the store holds the record in memory (Store.cachedRecord) and
   * the record alone decides ownership; undefined when only `get` can tell. It refuses (scope, permission, an
   * object the principal may not see) exactly as `get` does, in the same order. The lean read path's hot case.
   */
  getNow(ctx: Ctx, name: string, id: string): Loaded | undefined {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'read');
    const g = readGrant(ctx.principal, r);
    const record = this.store.cachedRecord?.(r.name, id, ctx.since);
    if (record === undefined) return undefined;
    const owned = ownsKnown(r, record, ctx.principal);
    return owned === null ? undefined : visible(ctx.principal, r, g, record, owned);
  }

  /**
   * `shared`: the store's result itself when the store shares it (a page its list cache keeps, frozen): the same
   * object for every read until the data changes, so renderings of it may be memoised by it (src/http/rendering/list-response.ts).
   */
  async list(
    ctx: Ctx,
    name: string,
    query: ListQuery,
    parent?: ParentRef,
    /** Read through this transaction instead of the store (a response rendered inside the change's own transaction). */
    reader: Reader = this.store,
  ): Promise<{ rows: Loaded[]; ranks?: number[]; total?: number; shared?: object }> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'read');
    const g = grantFor(ctx.principal, r.def.permissions.read);
    if (none(g)) throw new AppError('FORBIDDEN', `You may not list ${r.name}.`);
    // The query's own conditions as they are when nothing is added (a kept plan's: the store's keys of them may be kept too).
    let where: Condition[] = query.where;
    if (parent) {
      await this.loadVisible(ctx, this.resource(parent.resource), parent.id, reader);
      where = [...where, { path: parent.field, op: 'eq', value: parent.id }];
    }
    if (!g.all) where = [...where, ownerCondition(this.model, r, ctx.principal)];
    // Rows are only read from here on (rendered, never changed): the store may share them (ListQuery.shared);
    // a transaction's own reads are never shared.
    const result = await reader.list(name, { ...query, where, ...(reader === this.store ? { shared: true, since: ctx.since } : {}) });
    const rows: Loaded[] = [];
    // Listed by role, ownership is looked up per row only where it could change a link (a parent read each, for
    // ownership through a parent).
    const matters = g.all && ownershipMatters(r, ctx.principal);
    for (const record of result.rows) {
      // A list restricted to owned objects needs no per-row lookup; otherwise ownership is decided per row.
      const owned = !g.all ? true : matters ? await owns(this.model, r, record, ctx.principal, reader) : false;
      rows.push({ record, access: accessFor(r, record, ctx.principal, owned) });
    }
    return {
      rows,
      ...(result.ranks ? { ranks: result.ranks } : {}),
      ...(result.total !== undefined ? { total: result.total } : {}),
      ...(Object.isFrozen(result) ? { shared: result } : {}),
    };
  }

  async create(ctx: Ctx, name: string, body: unknown, parent?: ParentRef, within?: Within<Created>): Promise<Created> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'write');
    const g = grantFor(ctx.principal, r.def.permissions.create);
    if (none(g)) throw new AppError('FORBIDDEN', `You may not create ${r.name}.`);
    let input = body;
    if (parent && typeof body === 'object' && body !== null && !Array.isArray(body)) {
      // The path names the parent; the body may repeat it but not contradict it.
      const sent = (body as Record<string, unknown>)[parent.field];
      if (sent !== null && sent !== undefined && sent !== parent.id) {
        throw validation(r, [{ field: parent.field, message: 'must match the parent in the path', value: sent }]);
      }
      input = { ...body, [parent.field]: parent.id };
    }
    ctx.checkBody?.('create', ctx.principal.role, parent);
    let values = validateBody(r, 'create', ctx.principal.role, input, ctx.format);
    // Defaults hold for fields this caller may not set too (a customer's order starts `pending`).
    for (const [field, def] of Object.entries(r.fields)) {
      if (values[field] === undefined && def.default !== undefined) values[field] = structuredClone(def.default);
    }
    const o = r.def.ownership;
    if (o && !('through' in o) && o.field !== 'id' && (values[o.field] === null || values[o.field] === undefined) && ctx.principal.userId) {
      values[o.field] = ctx.principal.userId;
    }
    const now = this.now();
    if (r.def.hooks?.prepare) values = await r.def.hooks.prepare(values, this.prepareContext(ctx, now));
    return this.transaction(async (tx) => {
      // Authorization comes before the idempotency key is looked at: a stored response is replayed only to
      // a caller that may make the request now (scope and role above, the parent and ownership here).
      if (parent) await this.loadVisible(ctx, this.resource(parent.resource), parent.id, tx, 'reference');
      const record: StoredRecord = { id: uuidv7(), version: 1, created_at: now, updated_at: now };
      for (const [field] of r.stored) record[field] = values[field] ?? null;
      if (!g.all) await this.requireOwnCreation(ctx, r, record, values, tx);
      await within?.first(tx);
      await this.checkReferences(ctx, r, values, tx);
      // An item of an order is a change of the order: not while an operation holds it (the state rule).
      await assertPartsFree(tx, this.model, r, record);
      const hookCtx = this.hookContext(ctx, tx, now);
      if (r.def.hooks?.beforeCreate) {
        values = await r.def.hooks.beforeCreate(values, hookCtx);
        for (const [field] of r.stored) record[field] = values[field] ?? null;
        // A hook may rewrite values: what is stored must still be the caller's own.
        if (!g.all) await this.requireOwnCreation(ctx, r, record, values, tx);
      }
      await insertOrConflict(tx, r, record);
      if (emitsEvents(r)) await tx.appendEvent(buildEvent(this.apiVersion, r, record, `${r.singular}.created`, await ownerOf(this.model, r, record, tx), now));
      await r.def.hooks?.afterWrite?.(record, 'created', hookCtx);
      const owned = await owns(this.model, r, record, ctx.principal, tx);
      const created = { record, access: accessFor(r, record, ctx.principal, owned), reveal: hookCtx.reveal };
      await within?.last(tx, created);
      return created;
    }, ctx.joined);
  }

  /** PUT (whole replacement, omitted optional fields reset) or PATCH (JSON Merge Patch, RFC 7396). */
  /** `within`: an idempotency key's work in this transaction, once the caller may make the change (as create's). */
  async update(ctx: Ctx, name: string, id: string, mode: 'replace' | 'patch', body: unknown, precondition?: Precondition, within?: Within<Loaded>): Promise<Loaded> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'write');
    return this.transaction(async (tx) => {
      await this.lockPartsOf(tx, r, id);
      const loaded = await this.loadVisible(ctx, r, id, tx, 'update');
      if (!loaded.access.update) throw new AppError('FORBIDDEN', `You may not change this ${label(r)}.`);
      if (precondition && !precondition(loaded)) throw preconditionFailed();
      await within?.first(tx);
      ctx.checkBody?.(mode, ctx.principal.role);
      let input = body;
      if (mode === 'patch') {
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          throw new AppError('VALIDATION_ERROR', 'The request body must be a JSON object.', { details: [{ field: '(body)', message: 'must be a JSON object' }] });
        }
        const base: Record<string, unknown> = {};
        for (const field of writableFields(r, 'replace', ctx.principal.role)) {
          const value = loaded.record[field];
          if (value !== null && value !== undefined) base[field] = value;
        }
        input = applyMergePatch(base, body);
      }
      const values = validateBody(r, 'replace', ctx.principal.role, input, ctx.format);
      const changed: Record<string, unknown> = {};
      for (const [field, value] of Object.entries(values)) if (r.fields[field]?.references && value !== loaded.record[field]) changed[field] = value;
      await this.checkReferences(ctx, r, changed, tx);
      const record = await this.applyUpdate(tx, ctx, r, loaded.record, values, this.now());
      const updated = { record, access: accessFor(r, record, ctx.principal, await owns(this.model, r, record, ctx.principal, tx)) };
      await within?.last(tx, updated);
      return updated;
    }, ctx.joined);
  }

  /** `within`: an idempotency key's work in this transaction (its result is the deleted object's id). */
  async remove(ctx: Ctx, name: string, id: string, precondition?: Precondition, within?: Within<string>): Promise<void> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'write');
    await this.transaction(async (tx) => {
      await this.lockPartsOf(tx, r, id);
      let loaded: Loaded;
      try {
        loaded = await this.loadVisible(ctx, r, id, tx, 'delete');
      } catch (err) {
        // A keyed delete repeated finds nothing left: the first answer is replayed, to a caller whose role may still delete.
        if (within && err instanceof AppError && err.code === 'NOT_FOUND' && !none(grantFor(ctx.principal, r.def.permissions.delete))) await within.first(tx);
        throw err;
      }
      if (!loaded.access.delete) throw new AppError('FORBIDDEN', `You may not delete this ${label(r)}.`);
      if (precondition && !precondition(loaded)) throw preconditionFailed();
      await within?.first(tx);
      await this.deleteRecord(tx, ctx, r, loaded.record, this.now(), false);
      await within?.last(tx, loaded.record.id);
    }, ctx.joined);
  }

  /**
   * POST /{resource}/{id}/{action}: 409 INVALID_STATE outside the action's states. An asynchronous action
   * (ActionDef.perform) queues an operation in the same transaction, for a worker to perform after the commit.
   */
  async runAction(ctx: Ctx, name: string, id: string, actionName: string, within?: Within<ActionResult>, body?: unknown): Promise<ActionResult> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'write');
    const action = r.def.actions?.[actionName];
    if (!action || action.method !== 'POST' || (!action.run && !action.perform)) throw new Error(`${name} has no POST action ${actionName}`);
    // An action validates its body like a resource body (422 with details); one that declares no input takes `{}` or nothing.
    const input = validateShape<Record<string, unknown>>(actionInputSchema(action.input), body ?? {}, ctx.format ?? 'json', `${actionName} request`);
    return this.transaction(async (tx) => {
      const loaded = await this.loadVisible(ctx, r, id, tx, 'update');
      const g = grantFor(ctx.principal, action.allow);
      const owned = await owns(this.model, r, loaded.record, ctx.principal, tx);
      if (!g.all && !(g.owner && owned)) throw new AppError('FORBIDDEN', `You may not ${actionName} this ${label(r)}.`);
      // Only once the caller may run the action now is a stored response considered; the state check
      // comes after it, so a repeat of a completed action replays rather than failing INVALID_STATE.
      await within?.first(tx);
      // The state rule: an operation in flight holds the object (a payment processing: no cancel, no second payment).
      await assertNotHeld(tx, r, loaded.record);
      if (action.when && !action.when(loaded.record)) {
        throw new AppError('INVALID_STATE', `The ${actionName} action is not available for this ${label(r)} in its current state.`);
      }
      const now = this.now();
      const hookCtx = this.hookContext(ctx, tx, now);
      const changes = action.run ? await action.run(loaded.record, hookCtx, input) : {};
      // No changes, no write: an asynchronous action usually changes nothing until it is performed.
      let record = Object.keys(changes).length > 0 ? await this.applyUpdate(tx, ctx, r, loaded.record, changes, now) : loaded.record;
      const operation = action.perform ? await queueOperation(tx, this.model, r, record.id, actionName, now) : undefined;
      // Held from this commit until the operation is settled.
      if (operation) record = await writeHold(tx, record, r, operation.id);
      const result: ActionResult = {
        record,
        access: accessFor(r, record, ctx.principal, owned),
        ...(operation ? { operation } : {}),
        ...(Object.keys(hookCtx.reveal).length ? { reveal: hookCtx.reveal } : {}),
      };
      await within?.last(tx, result);
      return result;
    }, ctx.joined);
  }

  /**
   * Settles an operation in flight and releases its hold on the object, in one transaction (the worker's
   * second; src/services/operations.ts): with `changes` (what `perform` returned) they go through the update
   * path as the system, transitions and state events included, and the operation succeeds; with `error` it
   * fails and the object is left as it was. The object's lock first, the lock order of the request that
   * queued it. An operation settled already (another worker finished it after this one's lease ran out) is
   * left alone. An AppError thrown (the changes were refused) rolls it all back: settle it again with the error.
   */
  async settleOperation(operation: StoredRecord, outcome: { changes: Record<string, unknown> } | { error: string }): Promise<void> {
    const r = this.model.resources.get(String(operation.resource));
    const action = r?.def.actions?.[String(operation.action)];
    const ctx: Ctx = { principal: SYSTEM };
    await this.transaction(async (tx) => {
      const now = this.now();
      const current = r ? await tx.lock(r.name, String(operation.object_id), 'update') : null;
      const op = await tx.lock(OPERATIONS, operation.id, 'update');
      if (!op || op.status !== 'processing') return;
      const error =
        'error' in outcome
          ? outcome.error
          : !r || !current
            ? 'The object no longer exists.'
            : // Held, the object cannot have moved on; one queued before objects carried their hold may have.
              action?.when && !action.when(current)
              ? `The ${String(op.action)} action no longer applies to the object in its current state.`
              : null;
      if (error === null && 'changes' in outcome) await this.applyUpdate(tx, ctx, r!, current!, outcome.changes, now, { holder: op.id });
      else if (r && current && heldBy(current) === op.id) await writeHold(tx, current, r, null);
      await bumpOperation(tx, op, { status: error === null ? 'succeeded' : 'failed', error, next_attempt_at: null }, now);
    });
  }

  /**
   * GET /{resource}/{id}/{action} of an asynchronous action: its newest operation on the object, for whoever
   * may run the action (404 when the object is not visible or there is none). Not bound to `when`: the
   * outcome stays readable once the object has moved on (a paid order).
   */
  async operationOf(ctx: Ctx, name: string, id: string, actionName: string): Promise<StoredRecord> {
    const { r, loaded, reader } = await this.loadForAction(ctx, name, id, actionName, 'perform');
    const operation = await newestOperation(reader, r, loaded.record.id, actionName);
    if (!operation) throw new AppError('NOT_FOUND', `This ${label(r)} has no ${actionName} yet.`);
    return operation;
  }

  /** GET /{resource}/{id}/{action}: a read-only view that exists only in the action's states (404 otherwise). */
  async viewAction(ctx: Ctx, name: string, id: string, actionName: string): Promise<Record<string, unknown>> {
    const { r, action, loaded } = await this.loadForAction(ctx, name, id, actionName, 'view');
    if (action.when && !action.when(loaded.record)) throw new AppError('NOT_FOUND', `This ${label(r)} has no ${actionName} yet.`);
    // loadForAction refused an action without a view.
    return action.view?.(loaded.record) ?? {};
  }

  /** An object read for one of its action's GET answers, refused (403) to a caller who may not run the action. */
  private async loadForAction(
    ctx: Ctx,
    name: string,
    id: string,
    actionName: string,
    kind: 'perform' | 'view',
  ): Promise<{ r: CompiledResource; action: ActionDef; loaded: Loaded; reader: Reader }> {
    const r = this.resource(name);
    this.requireScope(ctx, r, 'read');
    const action = r.def.actions?.[actionName];
    if (!action?.[kind]) throw new Error(`${name} has no ${kind === 'perform' ? 'asynchronous' : 'GET'} action ${actionName}`);
    // Inside a joined transaction (a keyed GraphQL request's answer), what it changed already.
    const reader = ctx.joined ?? this.store;
    const loaded = await this.loadVisible(ctx, r, id, reader);
    const g = grantFor(ctx.principal, action.allow);
    const owned = await owns(this.model, r, loaded.record, ctx.principal, reader);
    if (!g.all && !(g.owner && owned)) throw new AppError('FORBIDDEN', `You may not read the ${actionName} of this ${label(r)}.`);
    return { r, action, loaded, reader };
  }

  /**
   * The shared update path: the state rule (no change while an operation holds the object or what it is part
   * of), state transitions, hooks, the write, its event and after-write hooks. `holder`: the operation being
   * settled, which alone may change the object it holds, and whose hold this write releases.
   */
  private async applyUpdate(
    tx: Tx,
    ctx: Ctx,
    r: CompiledResource,
    current: StoredRecord,
    changes: Record<string, unknown>,
    now: string,
    options: { eventType?: string; holder?: string } = {},
  ): Promise<StoredRecord> {
    await assertNotHeld(tx, r, current, options.holder);
    await assertPartsFree(tx, this.model, r, current);
    for (const [field, moves] of Object.entries(r.def.transitions ?? {})) {
      const from = current[field] as string;
      const to = changes[field] as string | undefined;
      if (to !== undefined && to !== from && !(moves[from] ?? []).includes(to)) {
        throw new AppError('INVALID_STATE', `${field} cannot move from ${from} to ${to}.`, { details: [{ field, message: `cannot move from ${from} to ${to}`, value: to }] });
      }
    }
    const hookCtx = this.hookContext(ctx, tx, now);
    const values = r.def.hooks?.beforeUpdate ? await r.def.hooks.beforeUpdate(changes, current, hookCtx) : changes;
    const next: StoredRecord = { ...current };
    // The hold is the services' own: no change and no hook sets it.
    for (const [field] of r.stored) if (field in values && field !== HOLD_FIELD) next[field] = values[field] ?? null;
    if (!anyStoredChange(r, current, next)) return options.holder !== undefined && heldBy(current) !== null ? writeHold(tx, current, r, null) : current;
    if (options.holder !== undefined) next[HOLD_FIELD] = null;
    next.version = current.version + 1;
    next.updated_at = now;
    await updateOrConflict(tx, r, next);
    if (changesCredential(r, current, next)) await tx.bumpCredentialEpoch();
    const previous = changedFields(r, current, next);
    const type = options.eventType ?? stateEvent(r, current, next) ?? `${r.singular}.updated`;
    if (emitsEvents(r)) await tx.appendEvent(buildEvent(this.apiVersion, r, next, type, await ownerOf(this.model, r, next, tx), now, previous));
    await r.def.hooks?.afterWrite?.(next, 'updated', hookCtx);
    return next;
  }

  private async deleteRecord(tx: Tx, ctx: Ctx, r: CompiledResource, record: StoredRecord, now: string, cascading: boolean): Promise<void> {
    await assertNotHeld(tx, r, record);
    // Deleted with its parent, a part follows the parent's answer, already given.
    if (!cascading) await assertPartsFree(tx, this.model, r, record);
    const hookCtx = { ...this.hookContext(ctx, tx, now), cascading };
    await r.def.hooks?.beforeDelete?.(record, hookCtx);
    for (const child of this.model.resources.values()) {
      for (const rel of child.parents) {
        if (rel.resource !== r.name) continue;
        const { rows } = await tx.list(child.name, { where: [{ path: rel.field, op: 'eq', value: record.id }], orderBy: [{ path: 'id', desc: false }], limit: HOOK_LIST_LIMIT });
        if (rows.length === 0) continue;
        if ((rel.onDelete ?? 'restrict') === 'restrict') {
          throw new AppError('CONFLICT', `This ${label(r)} still has ${child.name}; delete them first.`, {
            details: [{ field: 'id', message: `referenced by ${child.name}.${rel.field}`, value: record.id }],
          });
        }
        for (const row of rows) await this.deleteRecord(tx, ctx, child, row, now, true);
      }
    }
    const ownerId = await ownerOf(this.model, r, record, tx);
    await tx.delete(r.name, record.id);
    // A deleted credential (or the user behind one) is refused by every process from the next request on.
    if (r.def.credentialFields) await tx.bumpCredentialEpoch();
    if (emitsEvents(r)) await tx.appendEvent(buildEvent(this.apiVersion, r, record, `${r.singular}.deleted`, ownerId, now));
    await r.def.hooks?.afterWrite?.(record, 'deleted', hookCtx);
  }

  /** Locks the parents the object is part of before the object itself (BelongsTo.partOf): one lock order for every writer. */
  private async lockPartsOf(tx: Tx, r: CompiledResource, id: string): Promise<void> {
    if (r.parents.some((rel) => rel.partOf)) await lockParts(tx, r, await tx.get(r.name, id));
  }

  /** A caller granted creation only as an owner must own what it creates (an order for itself, an item of its own order). */
  private async requireOwnCreation(ctx: Ctx, r: CompiledResource, record: StoredRecord, values: Record<string, unknown>, tx: Tx): Promise<void> {
    if (await owns(this.model, r, record, ctx.principal, tx)) return;
    // A reference the caller cannot see is the body's fault (422), and says nothing about what exists.
    await this.checkReferences(ctx, r, values, tx);
    throw new AppError('FORBIDDEN', `You may only create ${r.name} of your own.`);
  }

  /** A referenced object must exist and be visible to the caller, or the field is invalid (never 404: it is the body's fault). */
  private async checkReferences(ctx: Ctx, r: CompiledResource, values: Record<string, unknown>, tx: Tx): Promise<void> {
    const details: ErrorDetail[] = [];
    for (const [field, value] of Object.entries(values)) {
      const target = r.fields[field]?.references;
      if (!target || value === null || value === undefined) continue;
      try {
        // Held until commit: the object named cannot be deleted under the new reference.
        await this.loadVisible(ctx, this.resource(target), String(value), tx, 'reference');
      } catch (err) {
        if (!(err instanceof AppError) || (err.code !== 'NOT_FOUND' && err.code !== 'FORBIDDEN')) throw err;
        details.push({ field, message: `does not name an existing ${label(this.resource(target))}`, value });
      }
    }
    if (details.length) throw validation(r, details);
  }

  private prepareContext(ctx: Ctx, now: string): PrepareContext {
    return { principal: ctx.principal, now, hashPassword: (password) => this.passwords.hash(password) };
  }

  private hookContext(ctx: Ctx, tx: Tx, now: string): HookContext {
    return hookContext(this.model, tx, this.prepareContext(ctx, now), (target, current, changes, eventType) =>
      this.applyUpdate(tx, ctx, target, current, changes, now, eventType === undefined ? {} : { eventType }),
    );
  }
}

/** A record as the principal may see it: one granted only on its own objects gets 404 for another's, so existence never leaks. */
function visible(principal: Principal, r: CompiledResource, g: GrantCheck, record: StoredRecord, owned: boolean): Loaded {
  if (!g.all && !owned) throw notFound(r);
  return { record, access: accessFor(r, record, principal, owned) };
}

/** Whether an update touches what a cached credential was resolved from (ResourceDef.credentialFields). */
function changesCredential(r: CompiledResource, before: StoredRecord, after: StoredRecord): boolean {
  const fields = r.def.credentialFields;
  if (fields === undefined) return false;
  if (fields === '*') return true;
  return fields.some((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
}

/** The event type a state change names (`order.cancelled`), if the resource declares one. */
function stateEvent(r: CompiledResource, before: StoredRecord, after: StoredRecord): string | undefined {
  for (const [field, types] of Object.entries(r.def.stateEvents ?? {})) {
    const to = after[field] as string;
    if (before[field] !== to && types[to]) return types[to];
  }
  return undefined;
}
