import { coerceError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { hasErrorCode } from "../errors/stint-error";
import type { LogFields, Logger } from "../logging/logger";
import type { JobAttempt } from "../store/job-store";
import type { StoreRetryPolicy } from "./store-retry-policy";

/** A fenced many-row store write: takes the rows, returns the ids that applied. */
export type BatchWrite<Row extends JobAttempt> = (rows: readonly Row[]) => Promise<readonly string[]>;

/** Whether one row's fenced write matched: `"fence-missed"` means another worker owns the job now. */
export type RowResult = "applied" | "fence-missed";

/** What one row's write came to in a group ({@link WriteBatcher.writeMany}): its result, or the store's error. */
export type GroupRowResult = RowResult | Error;

/** One row handed to {@link WriteBatcher.write}, or a group handed to {@link WriteBatcher.writeMany} (one promise for all its rows). */
type Pending<Row> =
  | { readonly row: Row; readonly settle: (result: RowResult) => void; readonly fail: (error: Error) => void }
  | { readonly group: readonly Row[]; readonly settleGroup: (results: GroupRowResult[]) => void };

const MAX_BATCH = 1_000;

/**
 * Group commit for one kind of fenced write (successes, retries, deaths):
 * rows that arrive while a write is in flight go out together in the next
 * statement, so a busy worker records hundreds of outcomes per round trip
 * and an idle one records a single outcome at once.
 *
 * A group of rows handed in at once ({@link writeMany}: a batch's
 * successes) travels as one entry with one promise, and is never split
 * across statements.
 *
 * Each statement runs under the store retry policy. When the store refuses
 * a statement of several rows (not an outage: the statement itself), the
 * rows are written again one at a time, so one bad row cannot take the
 * others down with it; only a row whose own statement is refused (or a
 * batch the outage outlasted) rejects, with the store's error.
 *
 * @example
 * ```ts
 * const retries = new WriteBatcher<RetryingJob>({
 *   write: (jobs) => store.scheduleRetries({ workerId, jobs }),
 *   policy, giveUpAfterMs: leaseMs, log, noun: "retries",
 * });
 * const result = await retries.write({ id: "812", attempt: 2, delayMs: 1_000, failure, spendAttempt: true });
 * // "applied" or "fence-missed"
 * ```
 */
export class WriteBatcher<Row extends JobAttempt> {
  readonly #write: BatchWrite<Row>;
  readonly #policy: StoreRetryPolicy;
  readonly #giveUpAfterMs: number;
  readonly #log: Logger;
  /** What the rows are, for the log line of a write that failed: "completions". */
  readonly #noun: string;
  readonly #logFields: LogFields;
  #pending: Pending<Row>[] = [];
  #flushing: Promise<void> | undefined;

  constructor(parts: {
    readonly write: BatchWrite<Row>;
    readonly policy: StoreRetryPolicy;
    readonly giveUpAfterMs: number;
    readonly log: Logger;
    readonly noun: string;
    readonly logFields?: LogFields;
  }) {
    this.#write = parts.write;
    this.#policy = parts.policy;
    this.#giveUpAfterMs = parts.giveUpAfterMs;
    this.#log = parts.log;
    this.#noun = parts.noun;
    this.#logFields = parts.logFields ?? {};
  }

  /** Writes `row` with the next statement; rejects with the store's error when it could not be written. */
  write(row: Row): Promise<RowResult> {
    return new Promise((settle, fail) => {
      this.#pending.push({ row, settle, fail });
      this.#flushing ??= this.#flushAll();
    });
  }

  /**
   * Writes `rows` with the next statement, as one group: resolves (never
   * rejects) with each row's result, in order, or the store's error for a
   * row that could not be written.
   */
  writeMany(rows: readonly Row[]): Promise<GroupRowResult[]> {
    return new Promise((settleGroup) => {
      this.#pending.push({ group: rows, settleGroup });
      this.#flushing ??= this.#flushAll();
    });
  }

  /** True while rows wait or a statement is in flight. */
  get busy(): boolean {
    return this.#flushing !== undefined;
  }

  /** Waits until every row handed in so far is written. */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async #flushAll(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#pending.length > 0) {
      await this.#writeBatch(this.#nextStatement());
    }
    this.#flushing = undefined;
  }

  /** The waiting entries of the next statement: up to {@link MAX_BATCH} rows, and always at least one entry (a group is never split). */
  #nextStatement(): Pending<Row>[] {
    let rows = 0;
    let count = 0;
    while (count < this.#pending.length) {
      const pending = this.#pending[count]!;
      const size = "row" in pending ? 1 : pending.group.length;
      if (count > 0 && rows + size > MAX_BATCH) break;
      rows += size;
      count += 1;
    }
    return this.#pending.splice(0, count);
  }

  async #writeBatch(batch: readonly Pending<Row>[]): Promise<void> {
    const rows: Row[] = [];
    for (const pending of batch) {
      if ("row" in pending) rows.push(pending.row);
      else for (const row of pending.group) rows.push(row);
    }
    try {
      const ids = (await this.#policy.run(() => this.#write(rows), { giveUpAfterMs: this.#giveUpAfterMs })) ?? [];
      // The ids that applied are some of the rows' own, one each: as many as there are rows means all of them.
      const applied = ids.length === rows.length ? undefined : new Set(ids);
      const resultOf = (row: Row): RowResult => (applied === undefined || applied.has(row.id) ? "applied" : "fence-missed");
      for (const pending of batch) {
        if ("row" in pending) pending.settle(resultOf(pending.row));
        else pending.settleGroup(pending.group.map(resultOf));
      }
    } catch (thrown) {
      const error = coerceError(thrown);
      if (rows.length > 1 && !hasErrorCode(error, ErrorCode.Infrastructure)) {
        for (const pending of batch) {
          if ("row" in pending) await this.#writeBatch([pending]);
          else pending.settleGroup(await this.#writeEach(pending.group));
        }
        return;
      }
      this.#log.error(`Could not record ${rows.length} ${this.#noun}: ${error.message}`, this.#logFields);
      for (const pending of batch) {
        if ("row" in pending) pending.fail(error);
        else pending.settleGroup(pending.group.map(() => error));
      }
    }
  }

  /** Writes a group's rows one statement each (the store refused the statement they were in). */
  async #writeEach(group: readonly Row[]): Promise<GroupRowResult[]> {
    const results: GroupRowResult[] = [];
    for (const row of group) {
      await this.#writeBatch([{ row, settle: (result) => results.push(result), fail: (error) => results.push(error) }]);
    }
    return results;
  }
}
