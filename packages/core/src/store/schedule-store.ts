/** A schedule as declared in code and written by `syncSchedules`. */
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

/** A stored schedule. */
export interface ScheduleRecord extends ScheduleSpec {
  /** The next fire time not yet enqueued. */
  readonly nextRunAt: Date;
  readonly lastFiredAt: Date | null;
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

/** What {@link ScheduleStore.syncSchedules} takes. */
export interface SyncSchedulesParams {
  /** Schedules to insert or update, at most one per name. */
  readonly schedules: readonly ScheduleSpec[];
  /** The first fire time of a new schedule (or one whose cron or time zone changed), after `now`. */
  readonly firstRunAt: (spec: ScheduleSpec, now: Date) => Date;
}

/** What {@link ScheduleStore.fireDueSchedules} takes. */
export interface FireDueSchedulesParams {
  /** At most this many schedules per call (1 to `MAX_SCHEDULES_PER_FIRE`). */
  readonly limit: number;
  /** Which fires to enqueue and the next fire time; pure, called with the database's `now()`. */
  readonly plan: (schedule: ScheduleRecord, now: Date) => SchedulePlan;
}

/**
 * Storage of periodic schedules. Implemented by drivers next to `JobStore`.
 * Fires are enqueued with the dedupe key `schedule:<name>:<fire ISO time>`
 * inside the transaction that advances `next_run_at`, so any number of
 * processes ticking at once enqueue each fire once.
 */
export interface ScheduleStore {
  /**
   * Inserts or updates the given schedules (others are left alone). A new
   * schedule, or one whose cron or time zone changed, gets `next_run_at`
   * from `firstRunAt`, called with the database's current time.
   */
  syncSchedules(params: SyncSchedulesParams): Promise<void>;

  /** Every stored schedule, by name. */
  listSchedules(): Promise<readonly ScheduleRecord[]>;

  /**
   * In one transaction: locks up to `limit` enabled schedules whose
   * `next_run_at` has passed (skipping ones another process holds), asks
   * `plan` (with the database's current time) which fires to enqueue and
   * when the next one is, enqueues them, and advances `next_run_at`.
   */
  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]>;
}
