import { sql } from "kysely";
import type { ChaosDatabase } from "./chaos-database";

/** One accepted change of a job, from the audit (`chaos_transitions`). */
export interface TrailStep {
  readonly state: string;
  /** `locked_by` after the change, under the name the caller gave its owner (the id itself otherwise). */
  readonly owner: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  /** `error_code` after the change: a recorded failure shows here. */
  readonly errorCode: string | null;
  /** `run_at` was at or before the change: the job was due at once. */
  readonly due: boolean;
  /** `locked_until` was set after the change (a lease). */
  readonly leased: boolean;
  /** Ms from `since` to the change, both on the database's clock. */
  readonly afterMs: number;
}

/**
 * Every job's accepted changes of state, attempts or owner, in order, by
 * job id: what the audit trigger saw committed. `owners` names worker ids
 * for reading (e.g. `A`, `B`); `since` is a time taken from the database's
 * clock, so each step's `afterMs` needs no second clock.
 */
export async function jobTrails(
  database: ChaosDatabase,
  since: Date,
  owners: Readonly<Record<string, string>>,
): Promise<ReadonlyMap<string, readonly TrailStep[]>> {
  const { rows } = await sql<{
    job_id: string;
    new_state: string;
    locked_by: string | null;
    new_attempts: number;
    max_attempts: number;
    error_code: string | null;
    due: boolean;
    leased: boolean;
    after_ms: string;
  }>`
    SELECT job_id::text, new_state, locked_by, new_attempts, max_attempts, error_code,
           run_at <= at AS due, locked_until IS NOT NULL AS leased, extract(epoch FROM at - ${since.toISOString()}::timestamptz) * 1000 AS after_ms
      FROM ${sql.id(database.schema, "chaos_transitions")}
     WHERE op = 'update'
     ORDER BY job_id, id`.execute(database.db);
  const trails = new Map<string, TrailStep[]>();
  for (const row of rows) {
    const steps = trails.get(row.job_id) ?? [];
    steps.push({
      state: row.new_state,
      owner: row.locked_by === null ? "-" : (owners[row.locked_by] ?? row.locked_by),
      attempts: row.new_attempts,
      maxAttempts: row.max_attempts,
      errorCode: row.error_code,
      due: row.due,
      leased: row.leased,
      afterMs: Number(row.after_ms),
    });
    trails.set(row.job_id, steps);
  }
  return trails;
}

/**
 * A trail as one line, e.g. `running A 1/3 → queued A 1/4 → running B 2/4
 * → succeeded B 2/4`: state, owner, attempts/max_attempts, then what is
 * out of the ordinary — an error code, a job not yet due, a lease on a job
 * that is not running or none on one that is.
 */
export function describeTrail(steps: readonly Omit<TrailStep, "afterMs">[]): string {
  return steps.map(describeStep).join(" → ");
}

function describeStep(step: Omit<TrailStep, "afterMs">): string {
  const notes = [
    ...(step.errorCode === null ? [] : [step.errorCode]),
    ...(step.due ? [] : ["not due"]),
    ...(step.leased === (step.state === "running") ? [] : [step.leased ? "still leased" : "no lease"]),
  ];
  return `${step.state} ${step.owner} ${step.attempts}/${step.maxAttempts}${notes.length === 0 ? "" : ` (${notes.join(", ")})`}`;
}
