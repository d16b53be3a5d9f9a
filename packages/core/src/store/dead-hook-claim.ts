import type { JobRecord } from "../job/job-record";

/**
 * One death whose `onDead` hook a worker claimed (see
 * `JobStore.claimDeadHooks`): the store records one per transition to
 * `dead`, in the statement that commits it, and forgets it when the worker
 * that claimed it last finishes it.
 *
 * @example
 * ```ts
 * const [claim] = await store.claimDeadHooks({ queue: "send-invoice", workerId, limit: 1, leaseMs: 40_000 });
 * if (claim?.delivery === 1) console.log(`job ${claim.jobId} died after attempt ${claim.attempt}`);
 * ```
 */
export interface DeadHookClaim {
  readonly jobId: string;
  /** The attempt after which the job died. */
  readonly attempt: number;
  /** 1 on the first claim of this death; more when an earlier claim lapsed before its worker finished it. */
  readonly delivery: number;
  /** When the death committed, on the database clock. */
  readonly diedAt: Date;
  /** The `error_code` the death recorded. */
  readonly errorCode: string | null;
  /** The `last_error` the death recorded (stack and causes, capped). */
  readonly lastError: string | null;
  /** The job as stored now (normally still `dead`), or `undefined` when it was deleted before its hook ran. */
  readonly job: JobRecord | undefined;
}
