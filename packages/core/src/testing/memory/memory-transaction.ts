import { ConfigError } from "../../errors/config-errors";

/** Where a {@link MemoryTransaction} stands. */
export type MemoryTransactionState = "open" | "committed" | "rolled back";

/** How the store ends a transaction it opened. */
export interface TransactionControl {
  /** Applies `last` (when given) and every write handed to `onCommit`, in order, then ends the transaction. */
  commit(last?: () => void): void;
  /** Drops every write and ends the transaction. */
  rollback(): void;
  /** Resolves once the transaction has ended, either way. */
  readonly ended: Promise<void>;
}

const CONTROLS = new WeakMap<MemoryTransaction, TransactionControl>();

/**
 * The transaction of an `InMemoryJobStore`: a unit of work whose writes
 * are held back until it commits and dropped if it rolls back. The store
 * opens one for `transaction(work)`, `ctx.once` (`runEffectOnce`) and
 * `ctx.transaction` (`completeInTransaction`); pass it to `enqueue` or
 * `enqueueMany` and the jobs exist if and only if it commits. A fake of
 * your own repository can take part too: hand it the writes to make with
 * `onCommit`.
 *
 * While it is open, a dedupe key it enqueued with is held: an enqueue of
 * the same key elsewhere waits for it to end, as PostgreSQL's unique index
 * makes a concurrent insert wait.
 *
 * @example
 * ```ts
 * await store.transaction(async (trx) => {
 *   await client.enqueue(SendInvoice, { invoiceId: 812 }, { transaction: trx });
 *   trx.onCommit(() => invoices.markQueued(812)); // your fake's write, made only if this commits
 * });
 * ```
 */
export class MemoryTransaction {
  #state: MemoryTransactionState = "open";
  readonly #writes: (() => void)[] = [];

  /** Opened by the store (see `InMemoryJobStore.transaction`). */
  constructor() {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    CONTROLS.set(this, {
      commit: (last) => {
        this.#assertOpen();
        // A throw from `last` leaves the transaction open, for the caller to roll back.
        last?.();
        this.#state = "committed";
        try {
          for (const write of this.#writes.splice(0)) write();
        } finally {
          end();
        }
      },
      rollback: () => {
        if (this.#state !== "open") return;
        this.#state = "rolled back";
        this.#writes.length = 0;
        end();
      },
      ended,
    });
  }

  /** `open`, `committed` or `rolled back`. */
  get state(): MemoryTransactionState {
    return this.#state;
  }

  /** Makes `write` when the transaction commits (never if it rolls back). */
  onCommit(write: () => void): void {
    if (typeof write !== "function") throw new ConfigError("write", "must be a function");
    this.#assertOpen();
    this.#writes.push(write);
  }

  #assertOpen(): void {
    if (this.#state !== "open")
      throw new ConfigError("transaction", `the transaction has already ${this.#state === "committed" ? "committed" : "rolled back"}`);
  }
}

/** Opens a transaction and returns it with the means to end it. */
export function openTransaction(): { readonly transaction: MemoryTransaction; readonly control: TransactionControl } {
  const transaction = new MemoryTransaction();
  return { transaction, control: CONTROLS.get(transaction)! };
}

/** Resolves once `transaction` has ended, either way. */
export function transactionEnded(transaction: MemoryTransaction): Promise<void> {
  return CONTROLS.get(transaction)!.ended;
}

/**
 * The transaction a caller passed to a store call, checked: `undefined`
 * when none, else an open {@link MemoryTransaction} of any in-memory store
 * (a `ConfigError` names the argument otherwise).
 */
export function givenTransaction(transaction: unknown): MemoryTransaction | undefined {
  if (transaction === undefined || transaction === null) return undefined;
  if (!(transaction instanceof MemoryTransaction)) {
    throw new ConfigError("transaction", "must be a MemoryTransaction of the in-memory store (see InMemoryJobStore.transaction)");
  }
  if (transaction.state !== "open") throw new ConfigError("transaction", `the transaction has already ${transaction.state}`);
  return transaction;
}

/** What {@link inTransaction} calls besides `work`. */
export interface TransactionSteps<T> {
  /** Called once the transaction is open, before `work`. */
  readonly opened?: (control: TransactionControl) => void;
  /**
   * Called with `work`'s value: returns the store's own last write, made
   * with the transaction's writes when it commits, or `undefined` to roll
   * it back instead. A throw rolls back and comes back to the caller.
   */
  readonly commit?: (value: T) => (() => void) | undefined;
}

/**
 * Runs `work` in a new transaction and commits it when `work` resolves
 * (unless `steps.commit` says to roll back); rolls back and rethrows when
 * `work` throws. Resolves to `work`'s value and whether it committed.
 */
export async function inTransaction<T>(
  work: (transaction: MemoryTransaction) => Promise<T>,
  steps: TransactionSteps<T> = {},
): Promise<{ readonly committed: boolean; readonly value: T }> {
  const { transaction, control } = openTransaction();
  steps.opened?.(control);
  try {
    const value = await work(transaction);
    const last = steps.commit === undefined ? () => undefined : steps.commit(value);
    if (last === undefined) {
      control.rollback();
      return { committed: false, value };
    }
    control.commit(last);
    return { committed: true, value };
  } catch (thrown) {
    control.rollback();
    throw thrown;
  }
}
