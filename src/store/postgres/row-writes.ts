// The rows this process's PostgreSQL transactions are writing and have written: a record read by id is kept only if none of them could have changed it after the read's snapshot.
import { recordKey } from '../record-cache.js';

/** Rows remembered with the end of their last writer; past it, they are dropped and reads sent before are not kept. */
const MAX_ROWS = 10_000;

/**
 * Carrying kept records over our own commits (OwnTransactions) holds only if a record kept never predates one of
 * those commits. A write forgets its row from the caches, but a read sent while a transaction writing that row is
 * open may see the row before it, and answer after it committed. So a read by id notes `now()` when sent, and its
 * record is kept only if `keepable`: no transaction of ours is writing the row, and none writing it ended since.
 */
export class RowWrites {
  /** Write transactions ended so far (committed or rolled back). */
  private ended = 0;
  /** Reads sent before this are never kept: the rows written before it were dropped. */
  private floor = 0;
  private readonly open = new Map<string, number>();
  private readonly endedAt = new Map<string, number>();

  /** The moment a read is sent, for `keepable`. */
  now(): number {
    return this.ended;
  }

  /** A transaction is about to write these rows (keys as RecordCache's, recordKey). */
  writing(keys: readonly string[]): void {
    for (const key of keys) this.open.set(key, (this.open.get(key) ?? 0) + 1);
  }

  /** A transaction that wrote `keys` (as told to `writing`, each as often) has ended. */
  end(keys: readonly string[]): void {
    this.ended++;
    if (this.endedAt.size + keys.length > MAX_ROWS) {
      this.endedAt.clear();
      this.floor = this.ended;
    }
    for (const key of keys) {
      const n = (this.open.get(key) ?? 1) - 1;
      if (n > 0) this.open.set(key, n);
      else this.open.delete(key);
      this.endedAt.set(key, this.ended);
    }
  }

  /** Whether a read of `key` (recordKey) sent at `sent` (now()) and answered now shows the row as our writes left it. */
  keepable(key: string, sent: number): boolean {
    return sent >= this.floor && !this.open.has(key) && (this.endedAt.get(key) ?? 0) <= sent;
  }
}

/** What a transaction's statements tell as they write (PgOps): the rows, and the transaction's id once PostgreSQL gives it. */
export interface WriteWatch {
  writing(resource: string, ids: readonly string[]): void;
  xid(xid: number): void;
}

/**
 * One transaction's watch (PgStore.transaction): each row it is about to write is forgotten from the caches and marked
 * open in `rows`, so no read keeps it (RowWrites.keepable); its id goes to `own`; at its end, committed or not, its
 * rows are marked ended and forgotten once more.
 */
export class TxWrites implements WriteWatch {
  private readonly written: Array<{ resource: string; id: string }> = [];

  constructor(
    private readonly rows: RowWrites,
    private readonly own: (xid: number) => void,
    private readonly forget: (resource: string, id: string) => void,
  ) {}

  writing(resource: string, ids: readonly string[]): void {
    this.rows.writing(ids.map((id) => recordKey(resource, id)));
    for (const id of ids) {
      this.written.push({ resource, id });
      this.forget(resource, id);
    }
  }

  xid(xid: number): void {
    this.own(xid);
  }

  /** Committed or rolled back: before its caller is answered. */
  end(): void {
    this.rows.end(this.written.map(({ resource, id }) => recordKey(resource, id)));
    for (const { resource, id } of this.written) this.forget(resource, id);
  }
}
