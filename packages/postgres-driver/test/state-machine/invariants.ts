import { JOB_STATES, type JobState } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { isTerminal, type Model, type Real } from "./model";

interface Row {
  readonly id: string;
  readonly state: JobState;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly locked_by: string | null;
  readonly locked_until: Date | null;
  readonly expired: boolean | null;
  readonly finished_at: Date | null;
  readonly due: boolean;
  readonly dedupe_key: string | null;
}

/**
 * Reads every row, in `jobs` and `finished_jobs` alike, and checks, after
 * each command:
 *
 * - no job lost and none invented: the rows are exactly the model's jobs,
 *   each once (never in both tables);
 * - no finished job is left in `jobs`: the statement that finished it moved
 *   it to `finished_jobs`;
 * - each row has a valid state, and the state, attempts and max_attempts
 *   the model predicts;
 * - attempts never decrease and never exceed max_attempts;
 * - running ⇔ locked_by and locked_until set (and locked_until is NULL
 *   otherwise); a running job is owned by the worker the model says, and
 *   its lease is expired exactly when the model says;
 * - finished_at is set exactly for succeeded, dead and cancelled jobs;
 * - at most one active job per dedupe key;
 * - at most one applied finalize per attempt (counted as commands apply).
 */
export async function checkInvariants(model: Model, real: Real, after: string): Promise<void> {
  const { rows } = await sql<Row>`SELECT id, state, attempts, max_attempts, locked_by, locked_until,
       locked_until < now() AS expired, finished_at, run_at <= now() AS due, dedupe_key
  FROM ${sql.id(real.schema, "all_jobs")} ORDER BY id`.execute(real.db);
  const where = (id: string): string => `job ${id} after ${after}`;
  const { rows: leftBehind } = await sql<{ id: string; state: JobState }>`SELECT id::text, state
  FROM ${sql.id(real.schema, "jobs")} WHERE state IN ('succeeded', 'dead', 'cancelled') ORDER BY id`.execute(real.db);
  expect(leftBehind, `finished jobs left in jobs after ${after}`).to.deep.equal([]);
  expect(
    rows.map((row) => String(row.id)),
    `the jobs after ${after}`,
  ).to.deep.equal(model.jobs.map((job) => job.id));
  const activeKeys = new Set<string>();
  for (const row of rows) {
    const id = String(row.id);
    const job = model.jobs.find((candidate) => candidate.id === id)!;
    expect(JOB_STATES, where(id)).to.include(row.state);
    expect({ state: row.state, attempts: row.attempts, maxAttempts: row.max_attempts }, where(id)).to.deep.equal({
      state: job.state,
      attempts: job.attempts,
      maxAttempts: job.maxAttempts,
    });
    expect(row.attempts, `${where(id)}: attempts decreased`).to.be.at.least(model.lastAttempts.get(id) ?? 0);
    expect(row.attempts, `${where(id)}: attempts exceed max_attempts`).to.be.at.most(row.max_attempts);
    model.lastAttempts.set(id, row.attempts);
    if (row.state === "running") {
      expect(row.locked_by, `${where(id)}: running without an owner`).to.equal(job.owner);
      expect(row.locked_until, `${where(id)}: running without a lease`).to.be.instanceOf(Date);
      expect(row.expired, `${where(id)}: lease expiry`).to.equal(job.leaseExpired);
    } else {
      expect(row.locked_until, `${where(id)}: ${row.state} but still leased`).to.equal(null);
    }
    expect(row.finished_at !== null, `${where(id)}: finished_at on a ${row.state} job`).to.equal(isTerminal(row.state));
    if (row.state === "queued" || row.state === "failed") expect(row.due, `${where(id)}: due`).to.equal(job.due);
    if (row.dedupe_key !== null && ["queued", "running", "failed"].includes(row.state)) {
      expect(activeKeys.has(row.dedupe_key), `${where(id)}: two active jobs hold ${row.dedupe_key}`).to.equal(false);
      activeKeys.add(row.dedupe_key);
    }
    for (const [attempt, count] of job.finalized) expect(count, `${where(id)}: attempt ${attempt} finalized twice`).to.equal(1);
  }
}
