import { sql } from "kysely";
import { enqueueTasks, figures, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

/**
 * 4. Handlers that run many times `leaseMs` keep their leases through the
 * heartbeat: each job is claimed once, and a rescue pass the harness runs
 * every 200 ms meanwhile never finds an expired lease. The short profile's
 * lease is 1.5 s rather than the full one's 1 s: on a shared machine a
 * commit can take a few hundred milliseconds, and a lease must leave the
 * heartbeat room for that (production leases are tens of seconds). Its
 * claims wait for their flush (see `ChaosWorkerSettings.durableClaims`).
 */
export const longHandler: Scenario = {
  id: 4,
  title: "handler running many leases",
  claim: "a handler running 10 × leaseMs (5 × in the short profile) keeps its lease: one claim per job, and a rescue pass every 200 ms never finds it expired",
  async run({ connectionString, profile }) {
    const p = profile.longHandler;
    const handlerMs = p.leases * p.leaseMs;
    return withChaosDatabase(connectionString, async (database) => {
      await enqueueTasks(
        database,
        range(p.jobs).map((seq) => ({ seq, action: "sleep", ms: handlerMs })),
        { maxAttempts: 5 },
      );
      const settings = { mode: "loop", concurrency: p.jobs, leaseMs: p.leaseMs, pollIntervalMs: 100, durableClaims: true } as const;
      return withSupervisor(database, { processes: 2, settings, restart: false }, async (supervisor) => {
        let rescued = 0;
        let passes = 0;
        const drained = await drainWithFaults(database, {
          timeoutMs: 3 * handlerMs + 30_000,
          tickMs: 200,
          inject: async () => {
            const { retried, dead } = await database.store.rescueExpiredLeases({ limit: 1_000 });
            rescued += retried + dead;
            passes += 1;
          },
        });
        const run = await settle(database, supervisor, p.jobs);
        const { invariants } = run;
        const claims = await figures(
          database.db,
          sql<{ claims: number; max_per_job: number; max_attempts: number; rescued_rows: number }>`
          SELECT count(*) AS claims, coalesce(max(per_job), 0) AS max_per_job,
                 (SELECT max(attempts) FROM ${sql.id(database.schema, "all_jobs")}) AS max_attempts,
                 (SELECT count(*) FROM ${sql.id(database.schema, "all_jobs")} WHERE error_code IS NOT NULL) AS rescued_rows
            FROM (SELECT job_id, count(*) OVER (PARTITION BY job_id) AS per_job FROM ${sql.id(database.schema, "chaos_transitions")}
                   WHERE new_state = 'running' AND (old_state <> 'running' OR new_attempts <> old_attempts)) c`,
        );
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the jobs did not finish");
        verdict.check(
          claims.claims === p.jobs && claims.max_per_job === 1,
          `${claims.claims} claims for ${p.jobs} jobs (at most ${claims.max_per_job} per job)`,
        );
        verdict.check(rescued === 0 && claims.rescued_rows === 0, `${rescued} leases rescued during the run`);
        verdict.check(claims.max_attempts === 1, `a job reached attempt ${claims.max_attempts}`);
        verdict.check(invariants.reExecutions === 0, `${invariants.reExecutions} re-executions`);
        verdict.check(states["succeeded"] === p.jobs, `succeeded ${states["succeeded"] ?? 0} of ${p.jobs}`);
        verdict.note(`handlers ${handlerMs / 1_000} s with leaseMs ${p.leaseMs}: ${claims.claims} claims, ${passes} rescue passes found ${rescued}`);
        // What the workers said is what explains a lost lease (a heartbeat that did not answer, a lapsed deadline).
        if (verdict.failures.length > 0) verdict.note(`worker warnings: ${supervisor.warnings().slice(0, 4).join(" | ") || "none"}`);
        return {
          jobs: p.jobs,
          faults: `${handlerMs / 1_000} s handlers, ${p.leaseMs / 1_000} s lease`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
