/** A schedule as declared in code (or created at run time), before it is stored. */
export interface ScheduleSpec {
  /** Unique name, part of each fire's dedupe key. */
  readonly name: string;
  readonly queue: string;
  /** A cron expression (5 or 6 fields). */
  readonly cron: string;
  /** IANA time zone the expression is read in, e.g. `Europe/Berlin`. */
  readonly timeZone: string;
  /** The payload of every job it enqueues, as JSON text. */
  readonly payloadJson: string;
  /** How many missed fires to enqueue after downtime (1: only the latest). */
  readonly catchUp: number;
  readonly enabled: boolean;
  /** Job settings of the jobs it enqueues. */
  readonly priority: number;
  readonly maxAttempts: number;
  readonly timeoutMs: number | null;
}

/**
 * Where a stored schedule comes from: `code` — declared by the
 * application's processes (`defineSchedule`, `registerSchedules`) and
 * kept alive by their declarations; `runtime` — created through
 * `ScheduleClient` or `stint schedules add`, kept until removed.
 */
export type ScheduleOrigin = "code" | "runtime";

/** A stored schedule. */
export interface ScheduleRecord extends ScheduleSpec {
  /** Declared in the code, or created at run time. */
  readonly origin: ScheduleOrigin;
  /**
   * On the store's clock: for a `code` schedule, the last time a process
   * declared it; for a `runtime` one, when it was last created or changed.
   */
  readonly declaredAt: Date;
  /** The next fire time not yet enqueued. */
  readonly nextRunAt: Date;
  readonly lastFiredAt: Date | null;
  /** When its definition last changed or it last fired. */
  readonly updatedAt: Date;
}

/** What a tick decides for one due schedule. */
export interface SchedulePlan {
  /** Fire times to enqueue now (already due), oldest first. */
  readonly fires: readonly Date[];
  /** The first fire time after now. */
  readonly nextRunAt: Date;
}

/** One fire a tick enqueued (or found already enqueued). */
export interface ScheduleFire {
  readonly schedule: string;
  readonly fireAt: Date;
  readonly jobId: string;
  /** True when a job for this fire already existed (another process won). */
  readonly duplicate: boolean;
}

/** The first fire time of a new schedule (or one whose cron or time zone changed), after `now` (the store's time). */
export type FirstRunAt = (spec: ScheduleSpec, now: Date) => Date;

/** What {@link ScheduleStore.syncSchedules} takes. */
export interface SyncSchedulesParams {
  /** The schedules the code declares, at most one per name. */
  readonly schedules: readonly ScheduleSpec[];
  /** The first fire of a new schedule, or of one whose cron or time zone changed. */
  readonly firstRunAt: FirstRunAt;
}

/** What {@link ScheduleStore.syncSchedules} did. */
export interface SyncSchedulesResult {
  /** Names given that a `runtime` schedule holds: left as they are, not declared. */
  readonly conflicts: readonly string[];
}

/** What {@link ScheduleStore.upsertSchedule} takes. */
export interface UpsertScheduleParams {
  /** The runtime schedule's definition. */
  readonly schedule: ScheduleSpec;
  /** Its first fire when it is new, or when its cron or time zone changed. */
  readonly firstRunAt: FirstRunAt;
}

/** What {@link ScheduleStore.upsertSchedule} wrote. */
export interface UpsertScheduleResult {
  /** The stored schedule, as it is now. */
  readonly schedule: ScheduleRecord;
  /** True when no schedule of that name existed. */
  readonly created: boolean;
}

/** What {@link ScheduleStore.removeSchedule} takes. */
export interface RemoveScheduleParams {
  /** The schedule's name. */
  readonly name: string;
}

/** What {@link ScheduleStore.fireDueSchedules} takes. */
export interface FireDueSchedulesParams {
  /** At most this many schedules per call (1 to `MAX_SCHEDULES_PER_FIRE`). */
  readonly limit: number;
  /** Which fires to enqueue and the next fire time; pure, called with the database's `now()`. */
  readonly plan: (schedule: ScheduleRecord, now: Date) => SchedulePlan;
  /**
   * A `code` schedule fires only while it was declared within this many
   * milliseconds before the store's now; one the code stopped declaring
   * longer ago is left alone. `runtime` schedules always fire.
   */
  readonly graceMs: number;
}

/**
 * Storage of periodic schedules. Implemented by drivers next to `JobStore`.
 * Fires are enqueued with the dedupe key `schedule:<name>:<fire ISO time>`
 * inside the transaction that advances `next_run_at`, so any number of
 * processes ticking at once enqueue each fire once.
 *
 * A name is held by one origin: the code's declarations (`syncSchedules`)
 * never touch a `runtime` schedule, and `upsertSchedule` never touches a
 * `code` one.
 */
export interface ScheduleStore {
  /**
   * Declares the code's schedules: inserts new ones and updates the
   * others, stamping each one's `declaredAt` with the store's time, changed
   * or not. A new schedule, or one whose cron or time zone changed, gets
   * `next_run_at` from `firstRunAt`, called with the store's time.
   * Schedules not given are left alone; names a `runtime` schedule holds
   * are left alone and reported.
   */
  syncSchedules(params: SyncSchedulesParams): Promise<SyncSchedulesResult>;

  /**
   * Creates or changes one `runtime` schedule, as `syncSchedules` does a
   * declared one (`next_run_at` kept unless the cron or time zone changed).
   * Rejects with a `ScheduleConflictError` when a `code` schedule holds the
   * name; nothing is written then.
   */
  upsertSchedule(params: UpsertScheduleParams): Promise<UpsertScheduleResult>;

  /** Deletes the schedule of that name, whatever its origin; resolves with it, or `undefined` when there was none. */
  removeSchedule(params: RemoveScheduleParams): Promise<ScheduleRecord | undefined>;

  /** Every stored schedule, by name. */
  listSchedules(): Promise<readonly ScheduleRecord[]>;

  /**
   * In one transaction: locks up to `limit` enabled schedules whose
   * `next_run_at` has passed and that are live (`runtime`, or `code` and
   * declared within `graceMs`), skipping ones another process holds; asks
   * `plan` (with the database's current time) which fires to enqueue and
   * when the next one is, enqueues them, and advances `next_run_at`.
   */
  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]>;
}
