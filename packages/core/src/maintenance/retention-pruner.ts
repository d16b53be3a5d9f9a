import type { JobStore } from "../store/job-store";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { MAX_BATCH_SIZE, MAX_RETENTION_DAYS } from "../limits";
import { planRetention } from "./queue-retention-plan";
import type { MaintenanceService } from "./maintenance-service";

/** How long finished jobs are kept. */
export interface RetentionOptions {
  /** Keep succeeded and cancelled jobs this many days. Default 7. A queue may keep its own (see `QueueRetention`). */
  readonly succeededDays?: number;
  /** Keep dead jobs this many days (for inspection and retry). Default 30. A queue may keep its own (see `QueueRetention`). */
  readonly deadDays?: number;
  /**
   * Keep the keys of the effects ledger (`ctx.once`) this many days. A key
   * deleted earlier than the last job that could repeat it runs its effect
   * again, so keep it longer than any job may take to be retried. Default 30.
   */
  readonly effectsDays?: number;
  /** Rows deleted per statement. Default 1,000. */
  readonly batchSize?: number;
  /** Most batches per pass, so one pass never runs long. Default 100. */
  readonly maxBatches?: number;
  /** How often the maintenance loop prunes, in ms. Default 600,000. */
  readonly everyMs?: number;
}

/**
 * A store that keeps finished jobs in partitions made ahead of time (the
 * PostgreSQL store, one per day): each retention pass keeps them ahead
 * before it prunes.
 */
export interface HistoryPartitionUpkeep {
  /** Creates the missing partitions from today on; returns how many it created. */
  ensureHistoryPartitions(): Promise<number>;
}

/**
 * The days a `RetentionPruner` keeps finished jobs and ledger keys when its
 * options do not say (cancelled jobs as succeeded ones): the global
 * retention of `stint run`'s maintenance pass, which passes none.
 *
 * @example
 * ```ts
 * DEFAULT_RETENTION_DAYS.deadDays; // 30
 * ```
 */
export const DEFAULT_RETENTION_DAYS = Object.freeze({ succeededDays: 7, deadDays: 30, effectsDays: 30 });

const DAY_MS = 86_400_000;
const KNOWN = ["succeededDays", "deadDays", "effectsDays", "batchSize", "maxBatches", "everyMs"];

/**
 * Deletes old finished jobs and old keys of the effects ledger in bounded
 * batches (each its own short statement, skipping locked rows, never
 * touching active jobs), so pruning never blocks the claim path. A pruned
 * job's attempt history goes with it. A store that keeps its history in
 * partitions may drop a whole one in a batch (more than `batchSize` jobs
 * at once); the pass then goes on until a batch comes back short, as ever.
 * A queue's own retention (`QueueRetention`, set with `QueueAdmin.retain`
 * or `stint retention`) is read at the start of each pass and replaces the
 * global setting for that queue's jobs.
 * Such a store, when it has `ensureHistoryPartitions()` (see
 * `HistoryPartitionUpkeep`), also gets its partitions made ahead at the
 * start of each pass.
 *
 * @example
 * ```ts
 * await new RetentionPruner(store, { succeededDays: 3, deadDays: 14 }).runOnce();
 * // "pruned 12000 succeeded/cancelled and 40 dead jobs, and 9000 effect keys"
 * ```
 */
export class RetentionPruner implements MaintenanceService {
  readonly name = "retention";
  readonly everyMs: number;
  readonly #store: JobStore;
  readonly #succeededMs: number;
  readonly #deadMs: number;
  readonly #effectsMs: number;
  readonly #batchSize: number;
  readonly #maxBatches: number;

  constructor(store: JobStore, options: RetentionOptions = {}) {
    rejectUnknownOptions("retention", options, KNOWN);
    this.#store = store;
    this.#succeededMs = integerOption("retention.succeededDays", options.succeededDays ?? DEFAULT_RETENTION_DAYS.succeededDays, 0, MAX_RETENTION_DAYS) * DAY_MS;
    this.#deadMs = integerOption("retention.deadDays", options.deadDays ?? DEFAULT_RETENTION_DAYS.deadDays, 0, MAX_RETENTION_DAYS) * DAY_MS;
    this.#effectsMs = integerOption("retention.effectsDays", options.effectsDays ?? DEFAULT_RETENTION_DAYS.effectsDays, 0, MAX_RETENTION_DAYS) * DAY_MS;
    this.#batchSize = integerOption("retention.batchSize", options.batchSize ?? 1_000, 1, MAX_BATCH_SIZE);
    this.#maxBatches = integerOption("retention.maxBatches", options.maxBatches ?? 100, 1, 1_000_000);
    this.everyMs = integerOption("retention.everyMs", options.everyMs ?? 600_000, 1_000, 86_400_000);
  }

  /**
   * One pass: makes history partitions ahead, if the store has them, then
   * deletes up to `maxBatches` batches per step of the plan (the global
   * retention, and each queue's own: see `planRetention`), and of effect
   * keys.
   */
  async runOnce(): Promise<string> {
    const partitions = hasPartitionUpkeep(this.#store) ? await this.#store.ensureHistoryPartitions() : 0;
    const global = { succeeded: this.#succeededMs, cancelled: this.#succeededMs, dead: this.#deadMs };
    let finished = 0;
    let dead = 0;
    for (const step of planRetention(global, await this.#store.listQueueControls())) {
      const deleted = await this.#batches(() => this.#store.deleteFinishedBefore({ ...step, limit: this.#batchSize }));
      if (step.states.length === 1 && step.states[0] === "dead") dead += deleted;
      else finished += deleted;
    }
    const effects = await this.#batches(() => this.#store.deleteEffectsBefore({ olderThanMs: this.#effectsMs, limit: this.#batchSize }));
    const made = partitions === 0 ? "" : `; made ${partitions} history partition${partitions === 1 ? "" : "s"}`;
    return `pruned ${finished} succeeded/cancelled and ${dead} dead jobs, and ${effects} effect keys${made}`;
  }

  /** Deletes finished jobs of `states` older than `olderThanMs`, batch by batch; returns how many. */
  prune(states: readonly ("succeeded" | "dead" | "cancelled")[], olderThanMs: number, onBatch?: (deleted: number) => void): Promise<number> {
    return this.#batches(() => this.#store.deleteFinishedBefore({ states, olderThanMs, limit: this.#batchSize }), onBatch);
  }

  async #batches(deleteBatch: () => Promise<number>, onBatch?: (deleted: number) => void): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < this.#maxBatches; batch += 1) {
      const deleted = await deleteBatch();
      total += deleted;
      onBatch?.(total);
      if (deleted < this.#batchSize) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return total;
  }
}

/** Whether `store` keeps its history in partitions made ahead of time. */
function hasPartitionUpkeep(store: JobStore): store is JobStore & HistoryPartitionUpkeep {
  return typeof (store as Partial<HistoryPartitionUpkeep>).ensureHistoryPartitions === "function";
}
