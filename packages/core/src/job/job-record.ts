import type { JsonObject, JsonValue } from "./json-types";
import type { JobState } from "./job-state";

/**
 * A job as a worker holds it after a claim: what the handler needs to run
 * the attempt and what the finalize fence needs (`id`, `attempt`).
 */
export interface ClaimedJob {
  /** The job's id (a bigint, kept as a decimal string). */
  readonly id: string;
  readonly queue: string;
  /** The stored payload, exactly as it came back from JSON. */
  readonly payload: unknown;
  /** This attempt's number, starting at 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  /** Per-attempt time limit in milliseconds, or `null` for none. */
  readonly timeoutMs: number | null;
  readonly createdAt: Date;
  readonly runAt: Date;
  /** The `meta` given at enqueue (`ctx.meta`); absent or empty when none. */
  readonly meta?: JsonObject;
  /** The workflow the job is a step of (absent when none): `ctx.dependencies()` reads its steps' results. */
  readonly workflowId?: string;
}

/** Everything the store keeps about one job (what `getJob` returns). */
export interface JobRecord {
  readonly id: string;
  readonly queue: string;
  readonly payload: unknown;
  readonly state: JobState;
  readonly priority: number;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly runAt: Date;
  readonly timeoutMs: number | null;
  readonly lockedBy: string | null;
  readonly lockedUntil: Date | null;
  readonly dedupeKey: string | null;
  /** No attempt starts after this instant (`startBy` or `expireInMs` at enqueue); `null` when the job never expires. */
  readonly startBy: Date | null;
  /** The job's group (`group` at enqueue), or `null`. */
  readonly group: string | null;
  /** The job's serial key (`serialKey` at enqueue), or `null`. */
  readonly serialKey: string | null;
  /** The workflow the job is a step of, or `null`. */
  readonly workflowId: string | null;
  /** The job's step name in its workflow, or `null`. */
  readonly step: string | null;
  readonly lastError: string | null;
  readonly errorCode: string | null;
  readonly result: unknown;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** How long the last attempt ran (null when none finished, as for a job cancelled before it ran). */
  readonly durationMs: number | null;
  readonly updatedAt: Date;
  /** The `meta` given at enqueue; `{}` when none. */
  readonly meta: JsonObject;
  /** The latest value the handler reported with `ctx.progress`, or `null`. */
  readonly progress: JsonValue | null;
}
