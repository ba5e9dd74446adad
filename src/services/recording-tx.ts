// A transaction wrapper that records the events appended in it, so they can be fanned out once committed, and moves the credentials epoch at most once.
import type { Condition, EventFilter, EventRecord, Group, GroupQuery, IdempotencyRecord, ListQuery, LockMode, ListResult, StoredEvent, StoredRecord, Tx } from '../store/types.js';

export class RecordingTx implements Tx {
  readonly events: EventRecord[] = [];
  /** An operation was queued in it (ResourceService.runAction): the worker is told once it commits. */
  queued = false;
  private bumped = false;

  constructor(private readonly tx: Tx) {}

  get(resource: string, id: string): Promise<StoredRecord | null> {
    return this.tx.get(resource, id);
  }

  getMany(resource: string, ids: readonly string[]): Promise<StoredRecord[]> {
    return this.tx.getMany(resource, ids);
  }

  findOne(resource: string, where: Condition[]): Promise<StoredRecord | null> {
    return this.tx.findOne(resource, where);
  }

  list(resource: string, query: ListQuery): Promise<ListResult> {
    return this.tx.list(resource, query);
  }

  listGroups(resource: string, query: GroupQuery): Promise<Map<string, Group>> {
    return this.tx.listGroups(resource, query);
  }

  lock(resource: string, id: string, mode: LockMode): Promise<StoredRecord | null> {
    return this.tx.lock(resource, id, mode);
  }

  sum(resource: string, where: Condition[], factors: string[]): Promise<number> {
    return this.tx.sum(resource, where, factors);
  }

  listEvents(afterSequence: number, limit: number, filter?: EventFilter): Promise<StoredEvent[]> {
    return this.tx.listEvents(afterSequence, limit, filter);
  }

  findEvent(id: string): Promise<StoredEvent | null> {
    return this.tx.findEvent(id);
  }

  lastEventSequence(): Promise<number> {
    return this.tx.lastEventSequence();
  }

  insert(resource: string, record: StoredRecord): Promise<void> {
    return this.tx.insert(resource, record);
  }

  update(resource: string, record: StoredRecord): Promise<void> {
    return this.tx.update(resource, record);
  }

  insertMany(resource: string, records: readonly StoredRecord[]): Promise<void> {
    return this.tx.insertMany(resource, records);
  }

  updateMany(resource: string, records: readonly StoredRecord[]): Promise<void> {
    return this.tx.updateMany(resource, records);
  }

  delete(resource: string, id: string): Promise<boolean> {
    return this.tx.delete(resource, id);
  }

  findIdempotency(scopeKey: string): Promise<IdempotencyRecord | null> {
    return this.tx.findIdempotency(scopeKey);
  }

  insertIdempotency(record: IdempotencyRecord): Promise<void> {
    return this.tx.insertIdempotency(record);
  }

  deleteExpiredIdempotency(scopeKey: string, now: number): Promise<boolean> {
    return this.tx.deleteExpiredIdempotency(scopeKey, now);
  }

  /** Once per transaction, however many credentials it changes (a user deleted with all its keys). */
  bumpCredentialEpoch(): Promise<void> {
    if (this.bumped) return Promise.resolve();
    this.bumped = true;
    return this.tx.bumpCredentialEpoch();
  }

  async appendEvent(event: EventRecord): Promise<void> {
    await this.tx.appendEvent(event);
    this.events.push(event);
  }
}
