// SQLite's change stamps: one that moves on every commit (ours and other processes'), one on other processes' commits alone.
import type { Connection } from './sqlite-ops.js';

/**
 * Commits by other processes (the CLI, say, on the same file) show in the write connection's `PRAGMA data_version`,
 * which counts every connection's commits but its own. Asking costs a read transaction (about 2.6 µs: two `fcntl`
 * calls), so `all` and `others` ask once per event-loop turn: requests served in the turn in which another process
 * committed may still see the version before it. `othersNow` asks at every call. In memory there is no other process.
 */
export class ChangeStamps {
  /** Moves on every commit: ours (`ourCommit`) and other processes'. */
  private commits = 0;
  /** Moves on other processes' commits alone. */
  private othersCommits = 0;
  private dataVersion: number | undefined;
  private sampledThisTurn = false;

  constructor(
    private readonly writer: Connection,
    private readonly memory: boolean,
  ) {}

  /** Every commit's stamp: kept pages and counts, the credentials epoch and GraphQL's kept answers hold under it. */
  all(): number {
    if (!this.memory && !this.sampledThisTurn) {
      this.sample();
      this.sampledThisTurn = true;
      setImmediate(() => {
        this.sampledThisTurn = false;
      });
    }
    return this.commits;
  }

  /**
   * Other processes' commits, sampled as `all` is: kept records hold under it. Ours do not move it: this process
   * knows which rows its commits wrote and forgets those alone (SqliteStore.committed), so a stream of writes leaves
   * every other row's record, and the item texts rendered from it, kept. Another process's commit, which could have
   * changed any row, still moves it.
   */
  others(): number {
    this.all();
    return this.othersCommits;
  }

  /** `others`, asked of the database now whatever the turn: kept list rows, of which nothing is read to tell a change (KeptRows). */
  othersNow(): number {
    if (!this.memory) this.sample();
    return this.othersCommits;
  }

  /** A commit of this process that changed rows. */
  ourCommit(): void {
    this.commits++;
  }

  private sample(): void {
    const version = this.writer.stmt('PRAGMA data_version').pluck().get() as number;
    if (version !== this.dataVersion) {
      this.dataVersion = version;
      this.commits++;
      this.othersCommits++;
    }
  }
}
