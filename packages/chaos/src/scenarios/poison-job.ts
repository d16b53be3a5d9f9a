import { ErrorCode } from "@stint/core";
import { sql } from "kysely";
import { enqueueTasks, figures, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

/**
 * 7. A poison job whose handler SIGKILLs its own process, among ordinary
 * jobs, run by once-mode processes that a supervisor starts back to back
 * (a CronJob firing continuously). Each attempt kills a process; after
 * `maxAttempts` of them, the lease rescue a once run does at start marks
 * the job dead, saying the worker died during the attempt. The other jobs
 * all succeed.
 */
export const poisonJob: Scenario = {
  id: 7,
  title: "poison job kills its process",
  claim:
    "a job whose handler SIGKILLs its own process: dead after exactly maxAttempts, its last_error saying the worker died during the attempt (STINT_WORKER_DIED); other jobs unaffected",
  async run({ connectionString, profile }) {
    const p = profile.poisonJob;
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      const middle = Math.floor(p.jobs / 2);
      await enqueueTasks(
        database,
        range(middle).map((seq) => ({ seq, action: "sleep", ms: 20 })),
        { maxAttempts: 10 },
      );
      const [poisonId] = await enqueueTasks(database, [{ seq: p.jobs, action: "kill-self", ms: 0 }], { maxAttempts: p.maxAttempts });
      await enqueueTasks(
        database,
        range(p.jobs - middle).map((i) => ({ seq: middle + i, action: "sleep", ms: 20 })),
        { maxAttempts: 10 },
      );
      const settings = { mode: "once", concurrency: p.concurrency, leaseMs: 1_000 } as const;
      return withSupervisor(database, { processes: p.processes, settings, restartDelayMs: 200 }, async (supervisor) => {
        const drained = await drainWithFaults(database, { timeoutMs: 60_000, tickMs: 200 });
        const selfKills = supervisor.unexpectedExits.filter((exit) => exit.signal === "SIGKILL").length;
        const run = await settle(database, supervisor, p.jobs + 1);
        const { invariants } = run;
        const { rows } = await sql<{ state: string; attempts: number; max_attempts: number; error_code: string | null; last_error: string | null }>`
          SELECT state, attempts, max_attempts, error_code, last_error FROM ${sql.id(schema, "all_jobs")} WHERE id = ${poisonId}`.execute(db);
        const poison = rows[0];
        const runs = await figures(
          db,
          sql<{ poison_runs: number }>`
          SELECT count(*) AS poison_runs FROM ${sql.id(schema, "chaos_executions")} WHERE job_id = ${poisonId}`,
        );
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the jobs did not all finish within a minute");
        verdict.check(poison?.state === "dead", `the poison job is ${poison?.state}, not dead`);
        verdict.check(poison?.attempts === p.maxAttempts, `the poison job made ${poison?.attempts} attempts, maxAttempts is ${p.maxAttempts}`);
        verdict.check(runs.poison_runs === p.maxAttempts, `the poison handler ran ${runs.poison_runs} times`);
        verdict.check(selfKills === p.maxAttempts, `${selfKills} processes died by SIGKILL, expected ${p.maxAttempts}`);
        verdict.check(poison?.error_code === ErrorCode.WorkerDied, `error_code ${poison?.error_code}`);
        verdict.check(
          /died/.test(poison?.last_error ?? "") && new RegExp(`during attempt ${p.maxAttempts} of ${p.maxAttempts}`).test(poison?.last_error ?? ""),
          `last_error does not say the worker died during the last attempt: ${poison?.last_error}`,
        );
        verdict.check(states["succeeded"] === p.jobs && states["dead"] === 1, `states ${JSON.stringify(states)}: the other jobs did not all succeed`);
        verdict.note(
          `poison dead after ${poison?.attempts}/${p.maxAttempts} attempts (${runs.poison_runs} handler runs, ${selfKills} self-kills), ${poison?.error_code}`,
        );
        verdict.note(`other jobs: ${states["succeeded"] ?? 0}/${p.jobs} succeeded`);
        verdict.note(`last_error: "${(poison?.last_error ?? "").replace(/^The worker \S+ /, "The worker ").slice(0, 110)}…"`);
        return {
          jobs: p.jobs + 1,
          faults: `${selfKills} × self-SIGKILL`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
