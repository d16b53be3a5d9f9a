import { sql } from "kysely";
import { enqueueTasks, figures, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, KillInjector, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

/**
 * 11. Handlers write their own row and complete their job in one
 * `ctx.transaction`, while worker processes are SIGKILLed: the rows
 * written equal the jobs succeeded, with no job's row written twice.
 */
export const transactionalCompletion: Scenario = {
  id: 11,
  title: "transactional completion under kill -9",
  claim: "a handler writes its rows and completes its job in one ctx.transaction; with kill -9 injected, rows written == jobs succeeded, 0 duplicates",
  async run({ connectionString, profile, random, log }) {
    const p = profile.transactionalCompletion;
    return withChaosDatabase(connectionString, async (database) => {
      await enqueueTasks(
        database,
        range(p.jobs).map((seq) => ({ seq, action: "transaction", ms: p.handlerMs })),
        { maxAttempts: 10 },
      );
      const settings = { mode: "loop", concurrency: p.concurrency, leaseMs: 4_000, pollIntervalMs: 200, shutdownTimeoutMs: 5_000 } as const;
      return withSupervisor(database, { processes: p.processes, settings }, async (supervisor) => {
        const killer = new KillInjector(database, supervisor, random, p.kills);
        const runStarted = Date.now();
        const drained = await drainWithFaults(database, { timeoutMs: 120_000, tickMs: p.killEveryMs, inject: () => killer.tick() });
        log(`  ${killer.kills} kills, ${supervisor.restarts} restarts, drained: ${drained}`);
        const runMs = Date.now() - runStarted;
        const run = await settle(database, supervisor, p.jobs);
        const { invariants } = run;
        const ledger = await figures(
          database.db,
          sql<{ rows: number; jobs: number; succeeded: number; matching: number }>`
          SELECT (SELECT count(*) FROM ${sql.id(database.schema, "chaos_ledger")}) AS rows,
                 (SELECT count(DISTINCT job_id) FROM ${sql.id(database.schema, "chaos_ledger")}) AS jobs,
                 (SELECT count(*) FROM ${sql.id(database.schema, "all_jobs")} WHERE state = 'succeeded') AS succeeded,
                 (SELECT count(*) FROM ${sql.id(database.schema, "all_jobs")} j JOIN ${sql.id(database.schema, "chaos_ledger")} l
                     ON l.job_id = j.id AND l.attempt = j.attempts AND j.result->>'by' = l.worker_id) AS matching`,
        );
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the queue did not drain within 2 minutes");
        verdict.check(killer.kills >= p.kills, `only ${killer.kills} kills happened before the queue drained (wanted ${p.kills})`);
        verdict.check(
          ledger.rows === ledger.succeeded && ledger.succeeded === p.jobs,
          `${ledger.rows} ledger rows, ${ledger.succeeded} jobs succeeded of ${p.jobs}`,
        );
        verdict.check(ledger.jobs === ledger.rows, `${ledger.rows - ledger.jobs} jobs wrote their row more than once`);
        verdict.check(ledger.matching === p.jobs, `${ledger.matching} of ${p.jobs} rows written by the attempt that completed the job`);
        verdict.check(
          invariants.reExecutions <= killer.inFlightAtKills,
          `${invariants.reExecutions} re-executions, more than the ${killer.inFlightAtKills} jobs in flight at the kills`,
        );
        verdict.check(states["succeeded"] === p.jobs, `states ${JSON.stringify(states)}`);
        verdict.note(
          `${killer.kills} SIGKILLs over the first ${(killer.lastKillAfterMs / 1_000).toFixed(1)} s of a ${(runMs / 1_000).toFixed(1)} s run; ledger rows ${ledger.rows} == jobs succeeded ${ledger.succeeded}, each by the completing attempt`,
        );
        verdict.note(`re-executions ${invariants.reExecutions} ≤ ${killer.inFlightAtKills} in flight at the kills`);
        return {
          jobs: p.jobs,
          faults: `${killer.kills} × SIGKILL`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + (ledger.rows - ledger.jobs),
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
