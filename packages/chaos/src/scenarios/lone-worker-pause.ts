import { sql } from "kysely";
import { checkInvariants, idleInTransaction } from "../harness/invariants";
import { eventually } from "@stint/core/testing";
import { enqueueTasks, figures, jobStates, sleep } from "../harness/jobs";
import { runOverlaps } from "../harness/run-overlaps";
import { Verdict, type Scenario } from "../harness/scenario";
import { withChaosDatabase } from "../harness/scenario-run";
import { Supervisor } from "../harness/supervisor";
import { FAIL_FAST_DRIVER } from "../worker/chaos-app";

/**
 * 14. The only worker process, with a job in flight, is stopped with
 * SIGSTOP for two leases; meanwhile one more job is enqueued; then SIGCONT.
 * Nobody else can take the job: the process itself must notice, on waking,
 * that its lease ran out, stop the handler before it claims the job again,
 * and run the new attempt only once the old one has ended. Repeated on the
 * same process, trial after trial.
 */
export const lonePause: Scenario = {
  id: 14,
  title: "lone worker paused past its lease",
  claim:
    "the only worker is SIGSTOPped for 2 × leaseMs with a job in flight, a job is enqueued, then SIGCONT: never two runs of a job at once, every job succeeded with attempts ≤ 2, 0 lost",
  async run({ connectionString, profile, log }) {
    const p = profile.lonePause;
    const pauseMs = 2 * p.leaseMs;
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      const jobs = sql.id(schema, "all_jobs");
      const executions = sql.id(schema, "chaos_executions");
      const settings = { mode: "loop", concurrency: 2, leaseMs: p.leaseMs, pollIntervalMs: 100, driver: FAIL_FAST_DRIVER } as const;
      const workers = new Supervisor({ connectionString, schema, processes: 1, restart: false, settings });
      try {
        await workers.start();
        const worker = workers.all[0]!;
        const recoveries: number[] = [];
        for (let trial = 0; trial < p.trials; trial += 1) {
          const held = 2 * trial;
          await enqueueTasks(database, [{ seq: held, action: "sleep-timed", ms: 20, firstMs: 10 * p.leaseMs }]);
          await eventually(async () => (await figures(db, sql<{ n: number }>`SELECT count(*) AS n FROM ${executions} WHERE seq = ${held}`)).n === 1, {
            timeoutMs: 20_000,
            intervalMs: 20,
            what: `trial ${trial + 1}: the handler of job ${held} to start`,
          });
          worker.node.kill("SIGSTOP");
          // The fault itself: the process stays stopped this long.
          await sleep(pauseMs);
          await enqueueTasks(database, [{ seq: held + 1, action: "sleep-timed", ms: 20 }]);
          worker.node.kill("SIGCONT");
          const resumed = Date.now();
          await eventually(
            async () =>
              (
                await figures(
                  db,
                  sql<{ n: number }>`SELECT count(*) AS n FROM ${jobs} WHERE state = 'succeeded' AND (payload->>'seq')::int IN (${held}, ${held + 1})`,
                )
              ).n === 2,
            { timeoutMs: 30_000, intervalMs: 20, what: `trial ${trial + 1}: both jobs to succeed after SIGCONT` },
          );
          recoveries.push(Date.now() - resumed);
        }
        const total = 2 * p.trials;
        const idle = await idleInTransaction(db);
        const stopped = await workers.stop();
        const invariants = await checkInvariants(database, total);
        const overlaps = await runOverlaps(database);
        const states = await jobStates(database);
        const attempts = await figures(
          db,
          sql<{ max: number; second: number }>`
          SELECT max(attempts) AS max, count(*) FILTER (WHERE attempts = 2) AS second FROM ${jobs}`,
        );
        const ends = await figures(
          db,
          sql<{ lease_lost: number }>`
          SELECT count(*) FILTER (WHERE ended_how = 'aborted:STINT_LEASE_LOST') AS lease_lost FROM ${executions}`,
        );
        log(`  recoveries after SIGCONT: ${recoveries.map((ms) => `${ms} ms`).join(", ")}`);

        const verdict = new Verdict();
        verdict.invariants(invariants, idle);
        verdict.check(overlaps.overlaps === 0, `${overlaps.overlaps} times a job's handler started while an earlier run of it was still running`);
        verdict.check(overlaps.unended === 0, `${overlaps.unended} of ${overlaps.runs} handler runs recorded no end`);
        verdict.check(attempts.max <= 2, `a job reached ${attempts.max} attempts, expected at most 2`);
        verdict.check(states["succeeded"] === total, `succeeded ${states["succeeded"] ?? 0} of ${total}`);
        verdict.check(
          stopped.every(({ exit }) => exit.code === 0),
          `the worker exited with ${stopped.map(({ exit }) => exit.code ?? exit.signal).join(", ")}`,
        );
        verdict.check(workers.unexpectedExits.length === 0, `the worker exited unexpectedly ${workers.unexpectedExits.length} times`);
        verdict.note(
          `${p.trials} pauses of ${(pauseMs / 1_000).toFixed(1)} s, lease ${p.leaseMs / 1_000} s: ${ends.lease_lost} handlers stopped by their lapsed lease, ` +
            `${attempts.second} jobs on attempt 2, max attempts ${attempts.max}`,
        );
        verdict.note(
          `${overlaps.overlaps} overlapping runs of ${overlaps.runs}; both jobs done ${Math.min(...recoveries)}–${Math.max(...recoveries)} ms after SIGCONT`,
        );
        return {
          jobs: total,
          faults: `${p.trials} × SIGSTOP ${(pauseMs / 1_000).toFixed(1)} s`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + overlaps.overlaps,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      } finally {
        for (const worker of workers.all) worker.node.kill("SIGCONT");
        await workers.abort();
      }
    });
  },
};
