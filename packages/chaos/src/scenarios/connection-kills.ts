import { enqueueTasks, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";
import { describeRoles, terminateStintBackends, type TerminationsByRole } from "../harness/terminate-backends";

/**
 * 2. `pg_terminate_backend` on random stint connections every second
 * (pooled ones, the heartbeat pool, the LISTEN and the leader lock): the
 * worker processes stay up, every job finishes, none is stuck.
 */
export const connectionKills: Scenario = {
  id: 2,
  title: "pg_terminate_backend on stint connections",
  claim:
    "every second, pg_terminate_backend on random stint connections (pool, heartbeat pool, LISTEN, leader lock): worker processes stay up, 0 lost, 0 stuck",
  async run({ connectionString, profile, random, log }) {
    const p = profile.connectionKills;
    return withChaosDatabase(connectionString, async (database) => {
      await enqueueTasks(
        database,
        range(p.jobs).map((seq) => ({ seq, action: "sleep", ms: p.handlerMs })),
        { maxAttempts: 10 },
      );
      const settings = { mode: "loop", concurrency: p.concurrency, leaseMs: 5_000, pollIntervalMs: 200, shutdownTimeoutMs: 5_000 } as const;
      return withSupervisor(database, { processes: p.processes, settings, restart: false }, async (supervisor) => {
        const byRole: TerminationsByRole = {};
        let terminated = 0;
        let rounds = 0;
        const drained = await drainWithFaults(database, {
          timeoutMs: 120_000,
          tickMs: 1_000,
          inject: async () => {
            rounds += 1;
            terminated += await terminateStintBackends(database.db, p.perSecond, random, byRole);
          },
        });
        log(`  ${terminated} connections terminated in ${rounds} rounds (${describeRoles(byRole)}), drained: ${drained}`);
        const exitedDuringRun = supervisor.unexpectedExits.length;
        const complaints = supervisor.complaints();
        const run = await settle(database, supervisor, p.jobs);
        const { invariants } = run;
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the queue did not drain within 2 minutes: jobs are stuck");
        verdict.check(exitedDuringRun === 0, `${exitedDuringRun} worker processes exited during the run`);
        verdict.check(
          run.exits.every((exit) => exit.code === 0),
          `exit codes after SIGTERM: ${run.exits.map((exit) => exit.code ?? exit.signal).join(", ")}`,
        );
        verdict.check(terminated >= 2, `only ${terminated} connections were terminated`);
        verdict.check(states["succeeded"] === p.jobs, `succeeded ${states["succeeded"] ?? 0} of ${p.jobs} (${JSON.stringify(states)})`);
        verdict.note(`${terminated} connections terminated (${describeRoles(byRole)})`);
        verdict.note(`${p.processes} processes up throughout (${complaints} warnings logged), 0 stuck`);
        verdict.note(`re-executions ${invariants.reExecutions}`);
        return {
          jobs: p.jobs,
          faults: `${terminated} × pg_terminate_backend`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
