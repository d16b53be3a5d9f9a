import type { Clock } from "../../time/clock";
import type { MemoryAttemptRow, MemoryDeadHookRow, MemoryLogRow, MemoryEffectRow, MemoryJobRow, MemoryQueueRow } from "./memory-rows";
import { isActive } from "./memory-rows";
import type { MemoryScheduleRow } from "./memory-schedules";
import type { MemoryTransaction } from "./memory-transaction";
import type { MemoryEdge, MemoryWorkflowRow } from "./memory-workflow-rows";

/** A dedupe key an open transaction enqueued with: held until it ends. */
export interface KeyHold {
  readonly transaction: MemoryTransaction;
  readonly ended: Promise<void>;
  /** The job that holds the key for the transaction: one it inserts, or a committed one it replaces. */
  readonly row: MemoryJobRow;
}

/**
 * The tables of one in-memory store, and its clock: what every operation
 * file reads and writes. Each operation runs to completion without
 * yielding, so it is atomic, as one statement is in PostgreSQL.
 */
export class MemoryState {
  readonly clock: Clock;
  /** Every job by id, in id order. */
  readonly jobs = new Map<string, MemoryJobRow>();
  /** Attempts that did not succeed, by job id, oldest first. */
  readonly attempts = new Map<string, MemoryAttemptRow[]>();
  /** `ctx.log` lines by job id, then attempt number (as `job_logs` keeps them). */
  readonly logs = new Map<string, Map<number, MemoryLogRow>>();
  /** The effects ledger by key. */
  readonly effects = new Map<string, MemoryEffectRow>();
  /** Keys whose effect runs now, each with the end of the transaction running it. */
  readonly effectRuns = new Map<string, Promise<void>>();
  /** Deaths whose `onDead` hook has not run, by `jobId:attempt`. */
  readonly deadHooks = new Map<string, MemoryDeadHookRow>();
  /** Operator controls by queue. */
  readonly queues = new Map<string, MemoryQueueRow>();
  /** Periodic schedules by name. */
  readonly schedules = new Map<string, MemoryScheduleRow>();
  /** Unique windows by {@link keyOf} of queue and key: the first job's id, and when the window closes. */
  readonly uniqueWindows = new Map<string, { readonly queue: string; readonly jobId: string; readonly until: number }>();
  /** Dedupe keys held by open transactions, by {@link keyOf}; unique window keys by {@link windowKeyOf}. */
  readonly keyHolds = new Map<string, KeyHold>();
  /** Serial lines held by a dead job, by {@link keyOf} of queue and key: the dead job's id. */
  readonly heldLines = new Map<string, string>();
  /**
   * The groups of each grouped queue (one per group or serial line with
   * waiting jobs, and `""` for the jobs without a group), by queue, then
   * key: what `job_groups` holds in PostgreSQL (see `memory-groups.ts`).
   */
  readonly groupTurns = new Map<string, Map<string, GroupTurn>>();
  /** The store's place in each grouped queue: the last group its previous claim reached, where the next one starts after. */
  readonly groupPlaces = new Map<string, string>();
  /** Workflows by id, in id order. */
  readonly workflows = new Map<string, MemoryWorkflowRow>();
  /** The edges into each step (what it waits for), by the step's job id. */
  readonly edgesInto = new Map<string, MemoryEdge[]>();
  /** The edges out of each step (what waits for it), by the step's job id. */
  readonly edgesFrom = new Map<string, MemoryEdge[]>();
  readonly #byQueue = new Map<string, Map<string, MemoryJobRow>>();
  #lastId = 0;
  #lastWorkflowId = 0;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** The store's time, in milliseconds since the epoch. */
  now(): number {
    return this.clock.now();
  }

  /** The next job id (ids are never reused, as a sequence's are not, even when the job is never inserted). */
  nextId(): number {
    this.#lastId += 1;
    return this.#lastId;
  }

  /** The next workflow id, from a sequence of its own. */
  nextWorkflowId(): number {
    this.#lastWorkflowId += 1;
    return this.#lastWorkflowId;
  }

  /** Records that `edge.dependent` waits for `edge.dependency`. */
  addEdge(edge: MemoryEdge): void {
    for (const [map, id] of [
      [this.edgesInto, edge.dependent],
      [this.edgesFrom, edge.dependency],
    ] as const) {
      const edges = map.get(id);
      if (edges === undefined) map.set(id, [edge]);
      else edges.push(edge);
    }
  }

  insert(row: MemoryJobRow): void {
    this.jobs.set(row.id, row);
    let queue = this.#byQueue.get(row.queue);
    if (queue === undefined) this.#byQueue.set(row.queue, (queue = new Map<string, MemoryJobRow>()));
    queue.set(row.id, row);
  }

  /** Deletes a job, its attempt history and its edges. */
  remove(row: MemoryJobRow): void {
    this.jobs.delete(row.id);
    this.#byQueue.get(row.queue)?.delete(row.id);
    this.attempts.delete(row.id);
    this.logs.delete(row.id);
    // The other end of each edge reads a missing job as gone (see the workflow reads).
    this.edgesInto.delete(row.id);
    this.edgesFrom.delete(row.id);
  }

  /** The jobs of `queue`, in id order. */
  rowsOf(queue: string): Iterable<MemoryJobRow> {
    return this.#byQueue.get(queue)?.values() ?? [];
  }

  /** The names of the queues that have jobs. */
  queuesWithJobs(): string[] {
    return [...this.#byQueue.entries()].filter(([, rows]) => rows.size > 0).map(([queue]) => queue);
  }

  /** The active job of `queue` holding `dedupeKey`, other than `exceptId`. */
  holderOf(queue: string, dedupeKey: string, exceptId?: string): MemoryJobRow | undefined {
    for (const row of this.rowsOf(queue)) {
      if (row.dedupeKey === dedupeKey && row.id !== exceptId && isActive(row.state)) return row;
    }
    return undefined;
  }

  /** Appends an attempt's history record. */
  recordAttempt(row: MemoryAttemptRow): void {
    const rows = this.attempts.get(row.jobId);
    if (rows === undefined) this.attempts.set(row.jobId, [row]);
    else rows.push(row);
  }
}

/** A group or a serial line of a grouped queue. */
export interface GroupTurn {
  /** Whether the key is a serial line's (fixed when the group is created: a key is one or the other). */
  readonly serial: boolean;
}

/** The key of {@link MemoryState.keyHolds} for a queue's dedupe key. */
export function keyOf(queue: string, dedupeKey: string): string {
  return `${queue}\u0000${dedupeKey}`;
}

/** The key of {@link MemoryState.keyHolds} for a queue's unique window key (apart from its dedupe keys). */
export function windowKeyOf(queue: string, key: string): string {
  return `window\u0000${keyOf(queue, key)}`;
}
