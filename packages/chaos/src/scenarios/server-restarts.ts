import { enqueueTasks, jobStates, openJobs, range } from "../harness/jobs";
import { startOwnPostgres } from "../harness/own-postgres";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

/**
 * 3. The PostgreSQL server restarted under running workers, once with
 * `pg_ctl restart -m fast` and once with `-m immediate` (crash recovery),
 * on a server the suite starts itself: the worker processes ride it out
 * without a restart of their own, and every job finishes.
 */
export const serverRestarts: Scenario = {
  id: 3,
  title: "PostgreSQL restarted (fast, immediate)",
  claim: "pg_ctl restart -m fast, then -m immediate, mid-run on a server the suite starts itself: workers resume without a restart of their own; 0 lost",
  async run({ profile, log }) {
    const p = profile.serverRestarts;
    const server = await startOwnPostgres();
    try {
      return await withChaosDatabase(server.connectionString, async (database) => {
        await enqueueTasks(
          database,
          range(p.jobs).map((seq) => ({ seq, action: "sleep", ms: p.handlerMs })),
          { maxAttempts: 10 },
        );
        const settings = { mode: "loop", concurrency: p.concurrency, leaseMs: 5_000, pollIntervalMs: 200, shutdownTimeoutMs: 5_000 } as const;
        return withSupervisor(database, { processes: p.processes, settings, restart: false }, async (supervisor) => {
          const pending: ("fast" | "immediate")[] = ["fast", "immediate"];
          const thresholds = { fast: 0.75, immediate: 0.4 };
          const downtimes: string[] = [];
          const drained = await drainWithFaults(database, {
            timeoutMs: 120_000,
            tickMs: 100,
            inject: async () => {
              const mode = pending[0];
              if (mode === undefined) return;
              const open = await openJobs(database).catch(() => p.jobs);
              if (open > p.jobs * thresholds[mode]) return;
              pending.shift();
              const ms = await server.restart(mode);
              downtimes.push(`${mode} ${(ms / 1_000).toFixed(1)} s`);
              log(`  restarted the server (-m ${mode}) with ${open} jobs open, back after ${ms} ms`);
            },
          });
          const exitedDuringRun = supervisor.unexpectedExits.length;
          const complaints = supervisor.complaints();
          const run = await settle(database, supervisor, p.jobs);
          const { invariants } = run;
          const states = await jobStates(database);

          const verdict = new Verdict();
          verdict.invariants(invariants, run.idleInTransaction);
          verdict.check(pending.length === 0, `restarts not done before the queue drained: ${pending.join(", ")}`);
          verdict.check(drained, "the queue did not drain within 2 minutes of the restarts");
          verdict.check(exitedDuringRun === 0, `${exitedDuringRun} worker processes exited during the run`);
          verdict.check(supervisor.restarts === 0, `${supervisor.restarts} worker processes were restarted`);
          verdict.check(
            run.exits.every((exit) => exit.code === 0),
            `exit codes after SIGTERM: ${run.exits.map((exit) => exit.code ?? exit.signal).join(", ")}`,
          );
          verdict.check(states["succeeded"] === p.jobs, `succeeded ${states["succeeded"] ?? 0} of ${p.jobs} (${JSON.stringify(states)})`);
          verdict.note(`restarts: ${downtimes.join(", ")}`);
          verdict.note(`${p.processes} worker processes rode it out (${complaints} warnings logged), none restarted`);
          verdict.note(`re-executions ${invariants.reExecutions}`);
          return {
            jobs: p.jobs,
            faults: `${downtimes.length} × pg_ctl restart`,
            lost: invariants.lost,
            duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
            reExecutions: invariants.reExecutions,
            verdict,
          };
        });
      });
    } finally {
      await server.stop();
    }
  },
};
