import { ConfigError } from "../../errors/config-errors";
import type { ClaimedJob } from "../../job/job-record";
import type { NewJob } from "../../store/job-store";
import { takeLease } from "./memory-claim";
import { newJobRow, toClaimedJob } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/** What {@link startJob} takes. */
export interface StartJobParams {
  /** The job to insert; its dedupe key is ignored. */
  readonly job: NewJob;
  readonly workerId: string;
  readonly leaseMs: number;
  /** The attempt to start: the job counts `attempt - 1` attempts before it (none of them in its history). */
  readonly attempt: number;
}

/**
 * Inserts a job and claims it at once as attempt `attempt`, whatever the
 * queue holds and whatever its controls say: how `runJob` puts the one
 * attempt it runs in the store.
 */
export function startJob(state: MemoryState, params: StartJobParams): ClaimedJob {
  const { job, attempt } = params;
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > job.maxAttempts) {
    throw new ConfigError("attempt", `must be a whole number from 1 to maxAttempts (${job.maxAttempts}), got ${String(attempt)}`);
  }
  const now = state.now();
  const row = newJobRow(state.nextId(), { ...job, dedupeKey: null }, now);
  row.attempts = attempt - 1;
  state.insert(row);
  takeLease(row, params.workerId, now, params.leaseMs);
  return toClaimedJob(row);
}
