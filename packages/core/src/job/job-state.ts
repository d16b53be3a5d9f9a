/**
 * The states a job moves through.
 *
 * - `blocked`: a workflow step waiting for the steps it depends on to succeed; never claimed;
 * - `queued`: waiting for its `run_at`;
 * - `running`: claimed by a worker that holds its lease;
 * - `failed`: an attempt failed and a retry is scheduled at `run_at`;
 * - `succeeded`: done, with its `result`;
 * - `dead`: given up (permanent error, parse error or attempts exhausted);
 * - `cancelled`: stopped by an operator before it finished.
 */
export type JobState = "blocked" | "queued" | "running" | "succeeded" | "failed" | "dead" | "cancelled";

/** All job states, in lifecycle order. */
export const JOB_STATES: readonly JobState[] = Object.freeze(["blocked", "queued", "running", "failed", "succeeded", "dead", "cancelled"]);

/** States in which a job is still active and keeps its dedupe key. */
export const ACTIVE_JOB_STATES: readonly JobState[] = Object.freeze(["queued", "running", "failed"]);

/** States in which a job has finished: it runs no more unless retried. */
export const FINISHED_JOB_STATES: readonly JobState[] = Object.freeze(["succeeded", "dead", "cancelled"]);
