/**
 * The read timeout of one connection's statements, kept by one timer for
 * the connection rather than one per statement. A statement not answered
 * within `timeoutMs` of being sent calls `onTimeout`, which is expected to
 * drop the connection: pg would otherwise wait for the lost answer, and
 * every later statement on it would wait too.
 *
 * A timer per statement (what pg's `query_timeout` arms) is armed and
 * cleared on every statement, which on a process idle between statements
 * delays each one before it is sent, twice on the path from enqueue to
 * handler start (see docs/benchmarks.md, Figures behind the code). Here the timer is armed once for the first
 * statement after an idle spell and, when it fires, re-armed for the
 * oldest statement still waiting, or not at all when none is.
 *
 * @example
 * ```ts
 * const watch = new ReadTimeoutWatch(35_000, () => dropConnection(client, new Error("Query read timeout")));
 * const answered = watch.sent();
 * client.query(text, values, (error, result) => { answered(); callback(error, result); });
 * ```
 */
export class ReadTimeoutWatch {
  readonly #timeoutMs: number;
  readonly #onTimeout: () => void;
  /** When each statement not answered yet was sent, oldest first (a Map keeps insertion order). */
  readonly #waiting = new Map<number, number>();
  #nextId = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number, onTimeout: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#onTimeout = onTimeout;
  }

  /** Notes a statement sent now; call what it returns once the statement is answered or failed. */
  sent(): () => void {
    const id = this.#nextId++;
    this.#waiting.set(id, performance.now());
    if (this.#timer === undefined) this.#arm(this.#timeoutMs);
    return () => void this.#waiting.delete(id);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(this.#check, ms);
    // The connection's socket keeps the process alive while a statement waits; this timer need not.
    this.#timer.unref();
  }

  readonly #check = (): void => {
    this.#timer = undefined;
    const oldest = this.#waiting.values().next();
    if (oldest.done === true) return;
    const left = oldest.value + this.#timeoutMs - performance.now();
    if (left > 0) {
      this.#arm(left);
      return;
    }
    this.#waiting.clear();
    this.#onTimeout();
  };
}
