import { sql } from "kysely";
import { enqueueTasks, figures, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

const JITTER = 0.2;

/**
 * 12. Jobs that fail on every attempt: each retry's delay, read from the
 * database's own timestamps (`run_at − updated_at` of the retry, recorded
 * by the audit trigger), lies within `min(base·2^(n−1), max) ± 20%`; no
 * attempt starts before its `run_at`; every job is dead after exactly
 * `maxAttempts` attempts.
 */
export const retryTiming: Scenario = {
  id: 12,
  title: "retry timing and maxAttempts",
  claim:
    "retry delays measured from database timestamps stay within min(base·2^(n−1), max) ± jitter, no retry starts early, and always-failing jobs are dead at exactly maxAttempts",
  async run({ connectionString, profile }) {
    const p = profile.retryTiming;
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      await enqueueTasks(
        database,
        range(p.jobs).map((seq) => ({ seq, action: "fail", ms: 0 })),
        { maxAttempts: p.maxAttempts },
      );
      const settings = {
        mode: "loop",
        concurrency: 16,
        leaseMs: 5_000,
        pollIntervalMs: 50,
        backoff: { baseMs: p.baseMs, maxMs: p.maxMs, jitter: JITTER },
      } as const;
      return withSupervisor(database, { processes: 2, settings, restart: false }, async (supervisor) => {
        const drained = await drainWithFaults(database, { timeoutMs: 60_000, tickMs: 100 });
        const run = await settle(database, supervisor, p.jobs);
        const { invariants } = run;
        const transitions = sql.id(schema, "chaos_transitions");
        const retries = await figures(
          db,
          sql<{ retries: number; outside: number; min_factor: number; max_factor: number }>`
          WITH r AS (
            SELECT extract(epoch FROM run_at - updated_at) * 1000 AS delay_ms,
                   least(${p.baseMs}::float8 * power(2, new_attempts - 1), ${p.maxMs}::float8) AS raw_ms
              FROM ${transitions} WHERE op = 'update' AND old_state = 'running' AND new_state = 'failed')
          SELECT count(*) AS retries,
                 count(*) FILTER (WHERE delay_ms < raw_ms * ${1 - JITTER}::float8 - 1 OR delay_ms > raw_ms * ${1 + JITTER}::float8 + 1) AS outside,
                 coalesce(min(delay_ms / raw_ms), 0) AS min_factor, coalesce(max(delay_ms / raw_ms), 0) AS max_factor
            FROM r`,
        );
        const starts = await figures(
          db,
          sql<{ claims: number; early: number; p50_late_ms: number; max_late_ms: number }>`
          WITH c AS (
            SELECT extract(epoch FROM started_at - run_at) * 1000 AS late_ms
              FROM ${transitions} WHERE op = 'update' AND old_state = 'failed' AND new_state = 'running')
          SELECT count(*) AS claims, count(*) FILTER (WHERE late_ms < 0) AS early,
                 coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY late_ms), 0) AS p50_late_ms,
                 coalesce(max(late_ms), 0) AS max_late_ms
            FROM c`,
        );
        const ends = await figures(
          db,
          sql<{ exact: number; runs: number }>`
          SELECT (SELECT count(*) FROM ${sql.id(schema, "all_jobs")} WHERE state = 'dead' AND attempts = ${p.maxAttempts} AND max_attempts = ${p.maxAttempts}) AS exact,
                 (SELECT count(*) FROM ${sql.id(schema, "chaos_executions")}) AS runs`,
        );
        const states = await jobStates(database);
        const expectedRetries = p.jobs * (p.maxAttempts - 1);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the jobs did not all die within a minute");
        verdict.check(retries.retries === expectedRetries, `${retries.retries} retries recorded, expected ${expectedRetries}`);
        verdict.check(retries.outside === 0, `${retries.outside} retry delays outside min(base·2^(n−1), max) ± ${JITTER * 100}%`);
        verdict.check(starts.early === 0, `${starts.early} retries started before their run_at`);
        verdict.check(ends.exact === p.jobs, `${ends.exact} of ${p.jobs} jobs dead at exactly ${p.maxAttempts} attempts (${JSON.stringify(states)})`);
        verdict.check(ends.runs === p.jobs * p.maxAttempts, `${ends.runs} handler runs, expected ${p.jobs * p.maxAttempts}`);
        verdict.note(
          `${retries.retries} retries, delay/policy ${retries.min_factor.toFixed(2)}–${retries.max_factor.toFixed(2)} (bounds ${1 - JITTER}–${1 + JITTER}), ${retries.outside} outside`,
        );
        verdict.note(
          `retry started after run_at by ${Math.round(starts.p50_late_ms)} ms (median), ${Math.round(starts.max_late_ms)} ms (max), ${starts.early} early`,
        );
        verdict.note(`${ends.exact}/${p.jobs} dead at exactly ${p.maxAttempts} attempts`);
        return {
          jobs: p.jobs,
          faults: `${ends.runs} failed attempts`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          // Runs beyond the first that were not a scheduled retry.
          reExecutions: ends.runs - p.jobs - retries.retries,
          verdict,
        };
      });
    });
  },
};
