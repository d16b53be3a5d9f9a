/**
 * Which of a worker's claims may not be on disk yet. Unless the worker
 * asks for durable claims, a claim commits without waiting for its WAL
 * flush (see `WorkerOptions.durableClaims`), so a database crash right
 * after it can undo it. PostgreSQL writes WAL in order: once a write this
 * worker sent after a claim answered has committed (synchronously, as
 * every outcome and heartbeat does) and changed a row, the claim is on
 * disk too.
 *
 * Claims are numbered as they answer; a write takes the number of the last
 * one before it is sent ({@link mark}) and, once it has changed a row,
 * marks every claim up to that number flushed ({@link flushed}).
 *
 * @example
 * ```ts
 * const renewal = await flushes.confirming(() => store.extendLeases(params), (answer) => answer.extended);
 * if (!flushes.isFlushed(lease.claim)) lease.abort(); // on a lost connection
 * ```
 */
export class ClaimFlushes {
  #claims = 0;
  #flushedUpTo = 0;

  /** Numbers a claim that just answered: `0` (always flushed) for one that waited for its flush. */
  claimed(durable: boolean): number {
    if (durable) return 0;
    this.#claims += 1;
    return this.#claims;
  }

  /** The number of the last claim that answered: a write sent now flushes up to it. */
  mark(): number {
    return this.#claims;
  }

  /** A write that took `mark` before it was sent committed and changed a row. */
  flushed(mark: number): void {
    if (mark > this.#flushedUpTo) this.#flushedUpTo = mark;
  }

  /** Whether claim number `claim` is known to be on disk. */
  isFlushed(claim: number): boolean {
    return claim <= this.#flushedUpTo;
  }

  /**
   * Runs a write and, when it changed a row, marks the claims before it
   * flushed. The write answers the rows (ids) it changed, or something
   * `changedRows` finds them in.
   */
  confirming<R extends readonly unknown[]>(write: () => Promise<R>): Promise<R>;
  confirming<R>(write: () => Promise<R>, changedRows: (answer: R) => readonly unknown[]): Promise<R>;
  async confirming<R>(write: () => Promise<R>, changedRows?: (answer: R) => readonly unknown[]): Promise<R> {
    const mark = this.mark();
    const answer = await write();
    const changed = changedRows === undefined ? (answer as readonly unknown[]) : changedRows(answer);
    if (changed.length > 0) this.flushed(mark);
    return answer;
  }
}
