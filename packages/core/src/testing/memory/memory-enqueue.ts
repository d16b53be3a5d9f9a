import { ConfigError } from "../../errors/config-errors";
import type { EnqueueResult, NewJob, UniqueWindow } from "../../store/job-store";
import { checkGroupKeys, insertJob } from "./memory-groups";
import { newJobRow, startByOf, type MemoryJobRow } from "./memory-rows";
import { keyOf, windowKeyOf, type KeyHold, type MemoryState } from "./memory-state";
import { transactionEnded, type MemoryTransaction } from "./memory-transaction";

/**
 * Inserts one job, or finds the active job of its queue that holds its
 * dedupe key; with `onDuplicate: "replace"` a `queued` holder takes the
 * job's payload, priority, attempts, timeout, run time and meta, and one
 * that has started (`running`, `failed`) gives its key up to this job, a
 * follow-up. With a transaction the job (or the replacement) is written
 * when it commits, and its key is held until then: an enqueue of the key
 * outside the transaction waits for it to end, as the unique index makes
 * PostgreSQL wait. A unique window is kept the same way (see
 * {@link enqueueInWindow}).
 */
export async function enqueueOne(state: MemoryState, job: NewJob, transaction: MemoryTransaction | undefined): Promise<EnqueueResult> {
  checkPayloadText(job);
  if (job.unique !== undefined && job.unique !== null) return enqueueInWindow(state, job, job.unique, transaction);
  for (;;) {
    const busy = job.dedupeKey === null ? undefined : heldElsewhere(state, keyOf(job.queue, job.dedupeKey), transaction);
    if (busy !== undefined) {
      await busy;
      continue;
    }
    const now = state.now();
    const holder = job.dedupeKey === null ? undefined : holderFor(state, job.queue, job.dedupeKey, transaction);
    if (holder === undefined || (job.onDuplicate === "replace" && holder.state !== "queued")) checkGroupKeys(state, [job]);
    if (holder === undefined) return Object.freeze({ id: insert(state, newJobRow(state.nextId(), job, now), transaction), duplicate: false });
    if (job.onDuplicate !== "replace") return Object.freeze({ id: holder.id, duplicate: true });
    if (holder.state !== "queued") return Object.freeze({ id: followUp(state, holder, newJobRow(state.nextId(), job, now), transaction), duplicate: false });
    write(state, transaction, holder, () => replace(holder, job, now));
    return Object.freeze({ id: holder.id, duplicate: true, replaced: true });
  }
}

/**
 * Inserts a job with a unique window: the first job of the window's key
 * whose window is still open, as `transaction` sees it, is returned as a
 * duplicate whatever its state; otherwise the job is inserted and the key's
 * window starts now. Another open transaction's window of the key is
 * waited for, as the window table's primary key makes PostgreSQL wait.
 */
async function enqueueInWindow(state: MemoryState, job: NewJob, unique: UniqueWindow, transaction: MemoryTransaction | undefined): Promise<EnqueueResult> {
  const holdKey = windowKeyOf(job.queue, unique.key);
  for (;;) {
    const busy = heldElsewhere(state, holdKey, transaction);
    if (busy !== undefined) {
      await busy;
      continue;
    }
    const now = state.now();
    const own = transaction === undefined ? undefined : state.keyHolds.get(holdKey);
    if (own?.transaction === transaction && own !== undefined) return Object.freeze({ id: own.row.id, duplicate: true });
    const open = state.uniqueWindows.get(keyOf(job.queue, unique.key));
    if (open !== undefined && open.until > now) return Object.freeze({ id: open.jobId, duplicate: true });
    checkGroupKeys(state, [job]);
    const row = newJobRow(state.nextId(), job, now);
    const start = (): void => {
      insertJob(state, row);
      state.uniqueWindows.set(keyOf(job.queue, unique.key), { queue: job.queue, jobId: row.id, until: now + unique.forMs });
    };
    if (transaction === undefined) start();
    else {
      state.keyHolds.set(holdKey, { transaction, ended: transactionEnded(transaction), row });
      transaction.onCommit(start);
    }
    return Object.freeze({ id: row.id, duplicate: false });
  }
}

/** `holder`, which has started, gives its key up to `row`, inserted as its follow-up (now, or when `transaction` commits). */
function followUp(state: MemoryState, holder: MemoryJobRow, row: MemoryJobRow, transaction: MemoryTransaction | undefined): string {
  row.follows = holder.id;
  const release = (): void => {
    holder.dedupeKey = null;
    holder.updatedAt = row.createdAt;
    insertJob(state, row);
  };
  if (transaction === undefined) release();
  else {
    state.keyHolds.set(keyOf(row.queue, row.dedupeKey!), { transaction, ended: transactionEnded(transaction), row });
    transaction.onCommit(release);
  }
  return row.id;
}

/**
 * Inserts a batch, results in input order: a later item with the queue and
 * dedupe key of an earlier one, or of an active job, is a duplicate of it.
 * Every job is checked before any is written; a batch never replaces.
 */
export async function enqueueBatch(state: MemoryState, jobs: readonly NewJob[], transaction: MemoryTransaction | undefined): Promise<readonly EnqueueResult[]> {
  for (const job of jobs) checkPayloadText(job);
  for (;;) {
    const busy = jobs.map((job) => (job.dedupeKey === null ? undefined : heldElsewhere(state, keyOf(job.queue, job.dedupeKey), transaction))).find(Boolean);
    if (busy !== undefined) {
      await busy;
      continue;
    }
    checkGroupKeys(state, jobsToInsert(state, jobs, transaction));
    const now = state.now();
    const firstOfKey = new Map<string, string>();
    return Object.freeze(
      jobs.map((job): EnqueueResult => {
        const key = job.dedupeKey === null ? undefined : keyOf(job.queue, job.dedupeKey);
        const earlier = key === undefined ? undefined : (firstOfKey.get(key) ?? holderFor(state, job.queue, job.dedupeKey!, transaction)?.id);
        if (earlier !== undefined) {
          if (key !== undefined) firstOfKey.set(key, earlier);
          return Object.freeze({ id: earlier, duplicate: true });
        }
        const id = insert(state, newJobRow(state.nextId(), job, now), transaction);
        if (key !== undefined) firstOfKey.set(key, id);
        return Object.freeze({ id, duplicate: false });
      }),
    );
  }
}

/** The jobs of a batch that {@link enqueueBatch} inserts: each one without a dedupe key, or the first of a key no active job holds. */
function jobsToInsert(state: MemoryState, jobs: readonly NewJob[], transaction: MemoryTransaction | undefined): NewJob[] {
  const keys = new Set<string>();
  return jobs.filter((job) => {
    if (job.dedupeKey === null) return true;
    const key = keyOf(job.queue, job.dedupeKey);
    if (keys.has(key)) return false;
    keys.add(key);
    return holderFor(state, job.queue, job.dedupeKey, transaction) === undefined;
  });
}

/**
 * Refuses payload text that is not JSON, as `jsonb` does in PostgreSQL:
 * the one thing about a job `CheckedJobStore` leaves to the store (it has
 * checked the rest, the meta included, before the call got here).
 */
export function checkPayloadText(job: NewJob): void {
  try {
    JSON.parse(job.payloadJson);
  } catch {
    throw new ConfigError("payloadJson", "must be the payload as JSON text (see serializePayload)");
  }
}

/** When another open transaction holds the key: the end of that transaction, to wait for. */
function heldElsewhere(state: MemoryState, key: string, transaction: MemoryTransaction | undefined): Promise<void> | undefined {
  const hold = state.keyHolds.get(key);
  if (hold === undefined) return undefined;
  if (hold.transaction.state !== "open") {
    state.keyHolds.delete(key);
    return undefined;
  }
  return hold.transaction === transaction ? undefined : hold.ended;
}

/** The job holding the key as `transaction` sees it: one it wrote itself, else a committed active job. */
function holderFor(state: MemoryState, queue: string, dedupeKey: string, transaction: MemoryTransaction | undefined): MemoryJobRow | undefined {
  const own = transaction === undefined ? undefined : state.keyHolds.get(keyOf(queue, dedupeKey));
  return own?.transaction === transaction && own !== undefined ? own.row : state.holderOf(queue, dedupeKey);
}

/** Inserts `row` now, or when `transaction` commits (holding its key until the transaction ends). */
function insert(state: MemoryState, row: MemoryJobRow, transaction: MemoryTransaction | undefined): string {
  write(state, transaction, row, () => insertJob(state, row));
  return row.id;
}

/** Makes `change` to `row` now, or when `transaction` commits, holding the row's dedupe key until then. */
function write(state: MemoryState, transaction: MemoryTransaction | undefined, row: MemoryJobRow, change: () => void): void {
  if (transaction === undefined) return change();
  if (row.dedupeKey !== null) {
    const hold: KeyHold = { transaction, ended: transactionEnded(transaction), row };
    state.keyHolds.set(keyOf(row.queue, row.dedupeKey), hold);
  }
  transaction.onCommit(change);
}

/** `job`'s fields on a queued holder of its key, unless it started meanwhile. */
function replace(holder: MemoryJobRow, job: NewJob, now: number): void {
  if (holder.state !== "queued") return;
  holder.payloadJson = job.payloadJson;
  holder.priority = job.priority;
  holder.maxAttempts = job.maxAttempts;
  holder.timeoutMs = job.timeoutMs;
  holder.runAt = (job.runAt?.getTime() ?? now) + job.delayMs;
  holder.startBy = startByOf(job, holder.runAt);
  holder.metaJson = job.metaJson ?? null;
  holder.updatedAt = now;
}
