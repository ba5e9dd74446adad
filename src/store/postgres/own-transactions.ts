// This process's own PostgreSQL transactions, by id: whether everything that committed between two snapshots was ours, so that what is kept under the first still holds under the second once our own rows are forgotten.

/** A snapshot as txid_current_snapshot()::text gives it: `xmin:xmax:xip,…` (PostgreSQL's "Snapshot Information Functions"). */
interface Snapshot {
  xmin: number;
  xmax: number;
  /** Transactions in progress when it was taken. */
  running: Set<number>;
}

/** Own ids kept at most: past it, they are dropped and every comparison fails until new ones are learnt (caches are emptied, never wrong). */
const MAX_OWN = 100_000;
/** Comparisons remembered at most. */
const MAX_ANSWERS = 64;
/** Past this many own ids, those that ended before the latest snapshot compared began are dropped. */
const PRUNE_FROM = 4_096;
/** Transaction ids between two snapshots looked at, at most: more and the caches are emptied instead. */
const MAX_SPAN = 20_000;

function parse(text: string): Snapshot | undefined {
  const m = /^(\d+):(\d+):([\d,]*)$/.exec(text);
  if (!m) return undefined;
  const running = new Set<number>();
  if (m[3]) for (const x of m[3].split(',')) running.add(Number(x));
  const xmin = Number(m[1]);
  const xmax = Number(m[2]);
  // Ids count up from 3 with a 32-bit epoch above them: far from 2^53, but a number past it could not be told apart.
  if (!Number.isSafeInteger(xmax) || xmin > xmax) return undefined;
  return { xmin, xmax, running };
}

/**
 * PostgreSQL's snapshot moves with every transaction that gets an id and ends, whoever runs it, so caches stamped with
 * it emptied at every commit, our own included: under a stream of writes nothing stayed kept (issue 31.2). A
 * transaction id is in a snapshot's past when it is below `xmax` and not running; the ones that ended between two
 * snapshots `a` and `b` (b later) are those below `b.xmax`, not running in `b`, that were running in `a` or were at or
 * above `a.xmax`. When each of them is one of this process's own transactions (`own`, told each write transaction's id
 * before it commits: PgStore.transaction, EventSequencer), nothing but our own writes changed between them, and
 * those forget their rows themselves (RowWrites): what was kept under `a` holds under `b`. Any other id (another
 * process, a change by hand, a purge, an id learnt too late) and the answer is no, and the caches empty as before.
 * A transaction that rolled back counts as ended too: it changed nothing, and ours forget their rows all the same.
 */
export class OwnTransactions {
  private readonly ids = new Set<number>();
  /** Recent comparisons and their answers (`from` and `to` joined): every cache and read asks about the same few pairs. */
  private readonly answers = new Map<string, boolean>();
  /** Whether `answers` holds a no, which an id learnt later may turn to yes. */
  private noes = false;
  /** The xmin of the latest snapshot compared: ours below it ended before it, needed only by caches stamped earlier. */
  private xmin = 0;

  /** A transaction of this process, by its id (txid_current()), learnt before it commits. */
  own(xid: number): void {
    if (!Number.isSafeInteger(xid)) return;
    if (this.ids.size >= PRUNE_FROM) for (const old of this.ids) if (old < this.xmin) this.ids.delete(old);
    if (this.ids.size >= MAX_OWN) this.ids.clear();
    this.ids.add(xid);
    // A "no" may have been for want of this id.
    if (this.noes) {
      this.answers.clear();
      this.noes = false;
    }
  }

  /** Whether every transaction that ended between snapshot `from` and the later `to` is one of ours. */
  carries(from: string, to: string): boolean {
    const key = `${from} ${to}`;
    const known = this.answers.get(key);
    if (known !== undefined) return known;
    const carries = this.onlyOurs(from, to);
    if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
    this.answers.set(key, carries);
    if (!carries) this.noes = true;
    return carries;
  }

  private onlyOurs(fromText: string, toText: string): boolean {
    const from = parse(fromText);
    const to = parse(toText);
    if (from === undefined || to === undefined || to.xmax < from.xmax || to.xmin < from.xmin || to.xmax - from.xmax > MAX_SPAN) return false;
    const ended = (xid: number): boolean => xid < to.xmax && !to.running.has(xid);
    for (const xid of from.running) if (ended(xid) && !this.ids.has(xid)) return false;
    for (let xid = from.xmax; xid < to.xmax; xid++) if (!to.running.has(xid) && !this.ids.has(xid)) return false;
    if (to.xmin > this.xmin) this.xmin = to.xmin;
    return true;
  }
}
