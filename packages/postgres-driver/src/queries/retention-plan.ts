import type { DeleteFinishedBeforeParams } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";

/** A state retention deletes. */
export type RetainedState = DeleteFinishedBeforeParams["states"][number];

/** What a retention pass is asked to delete: `DeleteFinishedBeforeParams` without the batch size. */
export type RetentionPass = Omit<DeleteFinishedBeforeParams, "limit">;

/** The span of one history partition: a UTC day. */
export const PARTITION_SPAN_MS = 86_400_000;

/**
 * Most rows a dropped partition may put back into `finished_jobs_kept`. They
 * are copied while `finished_jobs` is locked against every completion, so
 * they must be few: a partition holding more rows to keep has its doomed
 * rows deleted row by row instead, and is dropped once what it keeps is
 * gone too. The lock is held longer the more rows are copied, steeply
 * past this number (see docs/benchmarks.md, Figures behind the code); the
 * dead jobs of a day are usually far fewer.
 */
export const MAX_KEPT_PER_DROP = 2_000;

/**
 * Whether a pass may drop day partitions whole: not when it is limited to
 * some queues, since a partition holds the jobs of every queue.
 */
export function dropsPartitions(pass: RetentionPass): boolean {
  return pass.queues === undefined;
}

/**
 * Whether a pass also deletes, row by row, the rows past its cutoff in day
 * partitions that are not yet wholly past it. A retention of a day or more
 * keeps such rows until their whole day is past the cutoff (a job stays at
 * most a day longer than asked), so that every day goes at once, with its
 * table; a shorter one could never wait for a whole day, and a pass limited
 * to some queues cannot drop a partition at all, so both delete every row
 * past the cutoff, as a table without partitions would.
 */
export function deletesWithinDays(pass: RetentionPass): boolean {
  return !dropsPartitions(pass) || pass.olderThanMs < PARTITION_SPAN_MS;
}

/**
 * `AND queue <> ALL(…)` for a pass with `exceptQueues` (queues that keep
 * their jobs longer than its cutoff), else nothing: every statement that
 * picks the jobs a pass deletes adds it.
 *
 * @example
 * ```ts
 * sql`SELECT id FROM ${table} WHERE state = ANY(${states}) ${sparedQueues(pass)}`;
 * ```
 */
export function sparedQueues(pass: Pick<RetentionPass, "exceptQueues">): RawBuilder<unknown> {
  const spared = pass.exceptQueues ?? [];
  return spared.length === 0 ? sql`` : sql`AND queue <> ALL(${[...spared]}::text[])`;
}
