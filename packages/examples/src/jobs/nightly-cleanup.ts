import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

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

/**
 * Rows per delete statement when a payload names none, so no statement holds locks for long.
 *
 * @example
 * ```ts
 * await client.enqueue(NightlyCleanup, { target: "audit-events", olderThanDays: 90 }); // batches of DEFAULT_CLEANUP_BATCH
 * ```
 */
export const DEFAULT_CLEANUP_BATCH = 500;

/**
 * The `nightly-cleanup` job kind: delete the rows of one target older than
 * `olderThanDays` (0 to 36,500), `batchSize` rows per statement (1 to
 * 10,000, default 500). A cleanup is safe to repeat, so it may retry
 * freely; it gets ten minutes per attempt.
 *
 * @example
 * ```ts
 * await client.enqueue(NightlyCleanup, { target: "audit-events", olderThanDays: 90 }, { dedupeKey: "cleanup:audit-events" });
 * ```
 */
export const NightlyCleanup = defineJob("nightly-cleanup", {
  schema: z.strictObject({
    target: z.enum(CLEANUP_TARGETS),
    olderThanDays: z.int().min(0).max(36_500),
    batchSize: z.int().min(1).max(10_000).default(DEFAULT_CLEANUP_BATCH),
  }),
  maxAttempts: 5,
  timeoutMs: 600_000,
  priority: -1,
});

/** Payload of a `nightly-cleanup` job as its worker gets it: `batchSize` filled in. */
export type NightlyCleanup = ItemOf<typeof NightlyCleanup>;
