import { ConfigError, type ScheduleRecord, type UpsertScheduleResult } from "@stint/core";
import {
  assertSqlIdentifier,
  CheckedJobStore,
  CheckedScheduleStore,
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
import type { Kysely, Transaction } from "kysely";
import { KyselyStatements } from "./connection/kysely-statements";
import type { StatementRunner } from "./connection/statement-runner";
import { assertKysely } from "./is-kysely";
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
export class PostgresJobStore extends CheckedJobStore<Kysely<any> | Transaction<any>> implements ScheduleStore {
  readonly #raw: RawPostgresJobStore;
  readonly #schedules: CheckedScheduleStore;

  constructor(options: PostgresJobStoreOptions) {
    const raw = rawStore(options);
    super(raw, { maxPayloadBytes: options.maxPayloadBytes });
    this.#raw = raw;
    this.#schedules = new CheckedScheduleStore(raw, { maxPayloadBytes: this.maxPayloadBytes });
  }

  /** The schema this store reads and writes. */
  get schema(): string {
    return this.#raw.schema;
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
