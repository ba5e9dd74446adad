// Where the webhook dispatcher stands in the event log, per endpoint (DESIGN §9: each endpoint receives every matching event from its creation on, whenever a worker first runs).
import type { StoredRecord } from '../model/records.js';
import { DISPATCH_ROW, WEBHOOK_DELIVERIES, WEBHOOK_DISPATCH } from './deliveries.js';
import { WEBHOOK_ENDPOINTS } from './endpoints.js';
import { UniqueViolation, type Reader, type Store, type Tx } from '../store/types.js';

/** Endpoints read per dispatch; a deployment past it still dispatches, but leaves positions of unread endpoints alone. */
const MAX_ENDPOINTS = 10_000;
/** Clocks of the processes that write events differ by less than this: the purge keeps that much more. */
const CLOCK_SKEW_MS = 3600_000;

/**
 * The endpoints a dispatch serves, and the stretch of the log it may read for them. Endpoints at the same
 * position are served together by one read of the log; a position behind the others (an endpoint created while
 * the others had moved on, or before any worker ran) is served first, and stops where the next one is, so the
 * two merge and the log is read once per batch again.
 */
export interface DispatchPlan {
  /** The enabled endpoints at the lowest position; empty when no endpoint is enabled. */
  cohort: StoredRecord[];
  /** Their position: they are owed the events after it. */
  from: number;
  /** The next position of another enabled endpoint above `from`, if any: this dispatch reads no further. */
  until: number | undefined;
}

/** The position of an endpoint, as its row says or, with no row yet, as its creation says. */
function positionOf(endpoint: StoredRecord, row: StoredRecord | undefined, frontier: number): number {
  const createdAfter = endpoint.events_after === null || endpoint.events_after === undefined ? undefined : Number(endpoint.events_after);
  // No row: a new endpoint starts after the head read when it was created; one made by a build before this
  // field existed starts where the dispatcher is (as that build's single position did).
  if (!row) return createdAfter ?? frontier;
  // Paused (disabled when a dispatcher last looked) and enabled since: owed what came after that look.
  if (row.position === null || row.position === undefined) return Math.max(frontier, createdAfter ?? 0);
  return Number(row.position);
}

/** The endpoints, and the position rows as stored: read after the head (see DispatchPositions.open). */
interface Rows {
  endpoints: StoredRecord[];
  stored: StoredRecord[];
}

async function rowsOf(reader: Reader): Promise<Rows> {
  const { rows: endpoints } = await reader.list(WEBHOOK_ENDPOINTS, { where: [], orderBy: [{ path: 'id', desc: false }], limit: MAX_ENDPOINTS });
  const { rows: stored } = await reader.list(WEBHOOK_DISPATCH, { where: [], orderBy: [{ path: 'id', desc: false }], limit: MAX_ENDPOINTS + 1 });
  return { endpoints, stored };
}

/** What a dispatch owes the position rows (deleted, inserted, updated), its plan, and each endpoint's row as it leaves it. */
interface Step {
  deletes: string[];
  inserts: StoredRecord[];
  updates: StoredRecord[];
  plan: DispatchPlan;
  mine: Map<string, StoredRecord>;
}

/** The rows brought up to date with the frontier `lock` and the log's `head`, and which endpoints the dispatch serves. */
function planned(lock: StoredRecord, head: number, { endpoints, stored }: Rows, nowIso: string): Step {
  const frontier = Number(lock.position ?? head);
  const rows = new Map(stored.filter((r) => r.id !== DISPATCH_ROW).map((r) => [r.id, r]));
  const inserts: StoredRecord[] = [];
  const updates: StoredRecord[] = [];
  const enabled: Array<{ endpoint: StoredRecord; position: number }> = [];
  for (const endpoint of endpoints) {
    const row = rows.get(endpoint.id);
    rows.delete(endpoint.id);
    if (endpoint.status !== 'enabled') {
      // Disabled: owed nothing until enabled again. Paused once; nothing to write while it stays so.
      if (!row) inserts.push({ id: endpoint.id, version: 1, created_at: nowIso, updated_at: nowIso, position: null });
      else if (row.position !== null && row.position !== undefined) updates.push({ ...row, version: row.version + 1, updated_at: nowIso, position: null });
      continue;
    }
    const position = positionOf(endpoint, row, frontier);
    if (!row) inserts.push({ id: endpoint.id, version: 1, created_at: nowIso, updated_at: nowIso, position });
    else if (Number(row.position) !== position || row.position === null) updates.push({ ...row, version: row.version + 1, updated_at: nowIso, position });
    enabled.push({ endpoint, position });
  }
  // Rows left are those of deleted endpoints, when every endpoint was read.
  const deletes = endpoints.length < MAX_ENDPOINTS ? [...rows.keys()] : [];
  if (head > frontier) updates.push({ ...lock, version: lock.version + 1, updated_at: nowIso, position: head });
  const from = Math.min(...enabled.map((e) => e.position));
  const above = enabled.map((e) => e.position).filter((p) => p > from);
  return {
    deletes,
    inserts,
    updates,
    plan: {
      cohort: enabled.filter((e) => e.position === from).map((e) => e.endpoint),
      from: enabled.length ? from : head,
      until: above.length ? Math.min(...above) : undefined,
    },
    // Each endpoint's row as this transaction last wrote it (or read it): moveTo writes it again.
    mine: new Map([...stored, ...inserts, ...updates].filter((r) => r.id !== DISPATCH_ROW).map((r) => [r.id, r] as const)),
  };
}

/**
 * Positions are rows of WEBHOOK_DISPATCH: one per endpoint, under its id, and the frontier row every dispatching
 * transaction locks first, so dispatchers of every process take turns and each event is dispatched to each
 * endpoint once (its deliveries and its new position commit together). The frontier is the log's head as the
 * last dispatch read it, *before* it read the endpoints: an endpoint it saw disabled is paused (owed nothing),
 * and when enabled again resumes at the frontier then, below every event written after it was enabled.
 */
export class DispatchPositions {
  private constructor(
    private readonly tx: Tx,
    private readonly rows: Map<string, StoredRecord>,
    private readonly plan: DispatchPlan,
    private readonly nowIso: string,
  ) {}

  /** Locks the frontier, brings every endpoint's row up to date, and says which endpoints this dispatch serves. */
  static async open(tx: Tx, nowIso: string): Promise<DispatchPositions> {
    let lock = await tx.lock(WEBHOOK_DISPATCH, DISPATCH_ROW, 'update');
    // The head first, then the endpoints (READ COMMITTED reads each statement's own snapshot): an endpoint enabled
    // after it was read as disabled is enabled after this head, so every event it is owed lies above the head.
    const head = await tx.lastEventSequence();
    if (!lock) {
      // The first dispatch of the deployment: two starting at once collide on this insert, and the loser runs again.
      lock = { id: DISPATCH_ROW, version: 1, created_at: nowIso, updated_at: nowIso, position: head };
      await tx.insert(WEBHOOK_DISPATCH, lock);
    }
    const step = planned(lock, head, await rowsOf(tx), nowIso);
    for (const id of step.deletes) await tx.delete(WEBHOOK_DISPATCH, id);
    if (step.inserts.length) await tx.insertMany(WEBHOOK_DISPATCH, step.inserts);
    if (step.updates.length) await tx.updateMany(WEBHOOK_DISPATCH, step.updates);
    return new DispatchPositions(tx, step.mine, step.plan, nowIso);
  }

  /**
   * Whether a dispatch now would find nothing to do, read without a lock or a transaction: the frontier row exists, no
   * position row needs writing, and no enabled endpoint is owed an event. Then the dispatcher takes no lock. A lock
   * takes a transaction id on PostgreSQL, and its end moves the snapshot every process's caches are stamped with: each
   * idle tick of each dispatcher (every API process runs one, and a `canon worker`) emptied the list cache, the kept
   * rows and the records of every other process about once a second (issue 31). On SQLite it took the write lock.
   * A change read after this check is one a tick made a moment earlier would have missed too: the next tick sees it.
   */
  static async idle(reader: Reader, nowIso: string): Promise<boolean> {
    const lock = await reader.get(WEBHOOK_DISPATCH, DISPATCH_ROW);
    if (!lock) return false;
    const head = await reader.lastEventSequence();
    const step = planned(lock, head, await rowsOf(reader), nowIso);
    return step.deletes.length + step.inserts.length + step.updates.length === 0 && (step.plan.cohort.length === 0 || step.plan.from >= head);
  }

  get cohort(): StoredRecord[] {
    return this.plan.cohort;
  }

  get from(): number {
    return this.plan.from;
  }

  get until(): number | undefined {
    return this.plan.until;
  }

  /** Moves the cohort's endpoints to `to`: committed with the deliveries made for the events up to it. */
  async moveTo(to: number): Promise<void> {
    if (to === this.plan.from) return;
    const moved = this.plan.cohort.map((endpoint) => {
      const row = this.rows.get(endpoint.id)!;
      // A row written earlier in this transaction carries the version it was written with.
      return { ...row, version: row.version + 1, updated_at: this.nowIso, position: to };
    });
    await this.tx.updateMany(WEBHOOK_DISPATCH, moved);
  }
}

/** Runs a dispatching transaction, once more if it lost the race to create the frontier row (two first dispatches). */
export async function dispatching<T>(store: Store, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await store.transaction(fn);
  } catch (err) {
    if (!(err instanceof UniqueViolation) || err.resource !== WEBHOOK_DISPATCH) throw err;
    return store.transaction(fn);
  }
}

/**
 * What the event purge must keep (DESIGN §9: events are not purged while a matching delivery is still owed):
 * `through`, the highest sequence every enabled endpoint has had its deliveries made for (undefined with no
 * enabled endpoint); `before`, a time before which the event of every pending delivery was written (undefined
 * with none), read from the pending delivery of the oldest event id (UUIDv7 ids order by the time they were made,
 * RFC 9562 §5.7), less the clock skew between writers.
 */
export async function stillOwed(store: Reader): Promise<{ through: number | undefined; before: string | undefined }> {
  const frontier = await store.get(WEBHOOK_DISPATCH, DISPATCH_ROW);
  const { rows: endpoints } = await store.list(WEBHOOK_ENDPOINTS, {
    where: [{ path: 'status', op: 'eq', value: 'enabled' }],
    orderBy: [{ path: 'id', desc: false }],
    limit: MAX_ENDPOINTS,
  });
  const rows = new Map(
    (
      await store.getMany(
        WEBHOOK_DISPATCH,
        endpoints.map((e) => e.id),
      )
    ).map((r) => [r.id, r]),
  );
  // With no dispatch yet, an endpoint of an earlier build (no `events_after`) is owed the whole log.
  const at = frontier ? Number(frontier.position ?? 0) : 0;
  const positions = endpoints.map((e) => positionOf(e, rows.get(e.id), at));
  const through = positions.length ? Math.min(...positions) : undefined;
  const { rows: pending } = await store.list(WEBHOOK_DELIVERIES, {
    where: [{ path: 'status', op: 'eq', value: 'pending' }],
    orderBy: [{ path: 'event_id', desc: false }],
    limit: 1,
  });
  const event = pending[0] ? await store.findEvent(String(pending[0].event_id)) : null;
  const before = event ? new Date(Date.parse(event.created_at) - CLOCK_SKEW_MS).toISOString() : undefined;
  return { through, before };
}
