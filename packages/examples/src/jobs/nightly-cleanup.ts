import { defineJob } from "@stint/core";
import { PayloadFields } from "./payload-fields";

/**
 * What a cleanup may delete: an allow-list, never a table name from the payload.
 *
 * @example
 * ```ts
 * CLEANUP_TARGETS.includes("audit-events"); // true
 * ```
 */
export const CLEANUP_TARGETS = Object.freeze(["audit-events", "expired-sessions", "old-reports"] as const);

/** One of {@link CLEANUP_TARGETS}. */
export type CleanupTarget = (typeof CLEANUP_TARGETS)[number];

/** Payload of a `nightly-cleanup` job. */
export interface NightlyCleanup {
  readonly target: CleanupTarget;
  /** Rows older than this many days go. */
  readonly olderThanDays: number;
  /** Rows deleted per statement (default 500), so no statement holds locks for long. */
  readonly batchSize?: number;
}

/**
 * Rows per delete statement when a payload names none.
 *
 * @example
 * ```ts
 * parseNightlyCleanup({ target: "audit-events", olderThanDays: 90 }).batchSize === DEFAULT_CLEANUP_BATCH; // true
 * ```
 */
export const DEFAULT_CLEANUP_BATCH = 500;

/**
 * The `nightly-cleanup` job kind. A cleanup is safe to repeat, so it may
 * retry freely; it gets ten minutes per attempt.
 *
 * @example
 * ```ts
 * await client.enqueue(NightlyCleanup, { target: "audit-events", olderThanDays: 90 }, { dedupeKey: "cleanup:audit-events" });
 * ```
 */
export const NightlyCleanup = defineJob<NightlyCleanup>("nightly-cleanup", { maxAttempts: 5, timeoutMs: 600_000, priority: -1 });

/**
 * Validates a stored `nightly-cleanup` payload and fills in `batchSize`.
 *
 * @example
 * ```ts
 * parseNightlyCleanup({ target: "expired-sessions", olderThanDays: 1 }); // { …, batchSize: 500 }
 * parseNightlyCleanup({ target: "users", olderThanDays: 1 });
 * // throws: target must be one of "audit-events", "expired-sessions", "old-reports", got "users"
 * ```
 */
export function parseNightlyCleanup(payload: unknown): NightlyCleanup {
  const fields = PayloadFields.of(payload, ["target", "olderThanDays", "batchSize"]);
  return {
    target: fields.oneOf("target", CLEANUP_TARGETS),
    olderThanDays: fields.integer("olderThanDays", 0, 36_500),
    batchSize: fields.optionalInteger("batchSize", 1, 10_000, DEFAULT_CLEANUP_BATCH),
  };
}
