import { ConfigError, type ScheduleRecord, type UpsertScheduleResult } from "@stint/core";
import {
  assertSqlIdentifier,
  CheckedJobStore,
  CheckedScheduleStore,
  integerOption,
  MAX_BATCH_SIZE,
  rejectUnknownOptions,
  type FireDueSchedulesParams,
  type JobCompletionSource,
  type RemoveScheduleParams,
  type ScheduleFire,
  type ScheduleStore,
  type SyncSchedulesParams,
  type SyncSchedulesResult,
  type UpsertScheduleParams,
} from "@stint/core/driver";
import type { Kysely } from "kysely";
import { KyselyStatements } from "./connection/kysely-statements";
import type { PostgresTransaction } from "./connection/transaction-statements";
import type { StatementRunner } from "./connection/statement-runner";
import { interpretError } from "./interpret-error";
import { assertKysely } from "./is-kysely";
import { moveFinishedJobs } from "./queries/move-finished-jobs";
import { RawPostgresJobStore } from "./raw-postgres-job-store";
import { DEFAULT_SCHEMA } from "./schema/default-schema";

/** Options of {@link PostgresJobStore}. */
export interface PostgresJobStoreOptions {
  /** The main pool: enqueues, claims and operator queries. */
  readonly db: Kysely<any>;
  /**
   * The statement runner of `db`'s pool (`createDatabase` returns both as
   * `db` and `statements`): the hot statements — claims, enqueues — go
   * to it, named where its prepared-statement mode allows, skipping
   * Kysely. Without it they go through `db`, unnamed.
   */
  readonly statements?: StatementRunner;
  /** The schema that `migrate` created. Default `"stint"`. */
  readonly schema?: string;
  /**
   * A separate small pool for lease extensions and finalizes, so that
   * handler queries exhausting the main pool cannot starve the heartbeat.
   * Defaults to `db`.
   */
  readonly controlDb?: Kysely<any>;
  /** The statement runner of `controlDb`'s pool, as `statements` is `db`'s (heartbeats and outcome writes). */
  readonly controlStatements?: StatementRunner;
  /**
   * Largest payload the store inserts, in bytes of UTF-8 JSON, whatever
   * built the job (a job kind's own `maxPayloadBytes` may be lower). A
   * bigger one is refused with a `PayloadError` before any SQL runs; an
   * `enqueueMany` batch holding one is refused whole. Default 1 MiB.
   */
  readonly maxPayloadBytes?: number;
  /**
   * Hints for `client.waitFor` when a job finishes (a
   * `PostgresCompletionSource` on the same schema); without it, waiters
   * only poll. The store does not close it.
   */
  readonly completions?: JobCompletionSource;
}

const OPTION_KEYS = ["db", "statements", "schema", "controlDb", "controlStatements", "maxPayloadBytes", "completions"];

/**
 * The PostgreSQL `JobStore` and `ScheduleStore`, checked: every call's
 * arguments are checked by core's `CheckedJobStore` (and
 * `CheckedScheduleStore`) before any SQL runs, then the call runs one
 * statement from `queries/` (a fenced write after a claim, a batch for the
 * hot paths; `fireDueSchedules`, `runEffectOnce` and `completeInTransaction`
 * one transaction each) and database errors are translated through
 * `interpretError` — a lost connection or a serialization failure rejects
 * with `InfrastructureError`.
 *
 * The options are validated when the store is constructed, before any SQL
 * runs. The store does not own its pools: whoever created them closes them.
 *
 * @example
 * ```ts
 * const { db, statements } = createDatabase({ connectionString: process.env.DATABASE_URL! });
 * await migrate(db);
 * const store = new PostgresJobStore({ db, statements });
 * await store.enqueue(buildNewJob(SendInvoice, { invoiceId: 812 }));
 * await db.transaction().execute((trx) => store.enqueue(job, trx)); // exists iff trx commits
 * await store.fireDueSchedules({ limit: 100, graceMs: 86_400_000, plan }); // the same store keeps the schedules
 * ```
 */
export class PostgresJobStore extends CheckedJobStore<PostgresTransaction> implements ScheduleStore {
  readonly #raw: RawPostgresJobStore;
  readonly #schedules: CheckedScheduleStore;
  readonly #db: Kysely<any>;

  constructor(options: PostgresJobStoreOptions) {
    const raw = rawStore(options);
    super(raw, { maxPayloadBytes: options.maxPayloadBytes });
    this.#raw = raw;
    this.#schedules = new CheckedScheduleStore(raw, { maxPayloadBytes: this.maxPayloadBytes });
    this.#db = options.db;
  }

  /** The schema this store reads and writes. */
  get schema(): string {
    return this.#raw.schema;
  }

  /**
   * Creates the missing day partitions of the finished-jobs history, from
   * today (UTC) to a week ahead, and returns how many it created (0 when
   * they exist, or when the history table was too busy to wait for: the
   * next call makes them). The retention pass of the maintenance loop calls
   * it; a worker process may call it when it starts, so a deployment that
   * runs without maintenance still has today's partition. Jobs finishing on
   * a day without one land in `finished_jobs_kept`, which retention prunes
   * row by row. Works for the runtime role.
   *
   * @example
   * ```ts
   * await store.ensureHistoryPartitions(); // 0, or 1 on the first call of a new day
   * ```
   */
  ensureHistoryPartitions(): Promise<number> {
    return this.#raw.ensureHistoryPartitions();
  }

  syncSchedules(params: SyncSchedulesParams): Promise<SyncSchedulesResult> {
    return this.#schedules.syncSchedules(params);
  }

  upsertSchedule(params: UpsertScheduleParams): Promise<UpsertScheduleResult> {
    return this.#schedules.upsertSchedule(params);
  }

  removeSchedule(params: RemoveScheduleParams): Promise<ScheduleRecord | undefined> {
    return this.#schedules.removeSchedule(params);
  }

  listSchedules(): Promise<readonly ScheduleRecord[]> {
    return this.#schedules.listSchedules();
  }

  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    return this.#schedules.fireDueSchedules(params);
  }

  /**
   * Moves up to `limit` (1 to 100,000) finished jobs that are still in
   * `jobs` — written before version 15, or since by a worker of an older
   * version — to `finished_jobs`, oldest id first, and returns how many it
   * moved (see `moveFinishedJobs`): what `migrate` does in batches, one
   * batch at a time, for a caller that keeps moving the leftovers. Rows
   * someone holds locked are skipped; workers keep running.
   *
   * @example
   * ```ts
   * while ((await store.moveFinishedJobs({ limit: 5_000 })) === 5_000);
   * ```
   */
  async moveFinishedJobs(params: { readonly limit: number }): Promise<number> {
    const limit = integerOption("limit", params.limit, 1, MAX_BATCH_SIZE);
    try {
      return (await moveFinishedJobs(this.#db, this.schema, { limit })).moved;
    } catch (thrown) {
      throw interpretError(thrown, "moveFinishedJobs", { schema: this.schema });
    }
  }
}

/** The unchecked store behind a {@link PostgresJobStore}, from its validated options. */
function rawStore(options: PostgresJobStoreOptions): RawPostgresJobStore {
  if (typeof options !== "object" || options === null) throw new ConfigError("store", "options must be an object");
  rejectUnknownOptions("store", options, OPTION_KEYS);
  const schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
  const db = assertKysely(options.db, "db");
  const control = options.controlDb === undefined ? db : assertKysely(options.controlDb, "controlDb");
  const { completions } = options;
  if (completions !== undefined && (typeof completions !== "object" || completions === null || typeof completions.watch !== "function")) {
    throw new ConfigError("completions", "must be a JobCompletionSource (such as a PostgresCompletionSource)");
  }
  const statements = options.statements === undefined ? new KyselyStatements(db) : assertRunner(options.statements, "statements");
  const controlStatements =
    options.controlStatements !== undefined
      ? assertRunner(options.controlStatements, "controlStatements")
      : options.controlDb === undefined
        ? statements
        : new KyselyStatements(control);
  return new RawPostgresJobStore({ db, statements, controlStatements, schema, completions });
}

/** Checked by shape, so a runner from another copy of this package is accepted too. */
function assertRunner(value: unknown, option: string): StatementRunner {
  if (typeof value !== "object" || value === null || typeof (value as { run?: unknown }).run !== "function") {
    throw new ConfigError(option, "must be the `statements` of a database made by createDatabase");
  }
  return value as StatementRunner;
}
