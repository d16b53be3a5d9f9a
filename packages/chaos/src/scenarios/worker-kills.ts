import { sql } from "kysely";
import { enqueueTasks, figures, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, KillInjector, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

/**
 * 1. kill -9 of worker processes during a run: a supervisor restarts each
 * one; every job ends succeeded, handler runs beyond one per job stay
 * within the jobs the victims held, and every effect made through
 * `ctx.once` is applied exactly once.
 */
export const workerKills: Scenario = {
  id: 1,
  title: "kill -9 worker processes",
  claim:
    "SIGKILL of random worker processes (restarted by a supervisor) during a run: 0 lost, every job terminal, re-executions ≤ jobs in flight at the kills, effects made through ctx.once applied exactly once",
  async run({ connectionString, profile, random, log }) {
    const p = profile.workerKills;
    return withChaosDatabase(connectionString, async (database) => {
      await enqueueTasks(
        database,
        range(p.jobs).map((seq) => ({ seq, action: "effect", ms: p.handlerMs })),
        { maxAttempts: 10 },
      );
      const settings = { mode: "loop", concurrency: p.concurrency, leaseMs: p.leaseMs, pollIntervalMs: 200, shutdownTimeoutMs: 5_000 } as const;
      return withSupervisor(database, { processes: p.processes, settings }, async (supervisor) => {
        const killer = new KillInjector(database, supervisor, random, p.kills);
        const runStarted = Date.now();
        const drained = await drainWithFaults(database, { timeoutMs: 240_000, tickMs: p.killEveryMs, inject: () => killer.tick() });
        log(`  ${killer.kills} kills, ${supervisor.restarts} restarts, drained: ${drained}`);
        const runMs = Date.now() - runStarted;
        const run = await settle(database, supervisor, p.jobs);
        const { invariants } = run;
        const effects = await figures(
          database.db,
          sql<{ rows: number; keys: number; body_runs: number }>`
          SELECT (SELECT count(*) FROM ${sql.id(database.schema, "chaos_effects")}) AS rows,
                 (SELECT count(DISTINCT seq) FROM ${sql.id(database.schema, "chaos_effects")}) AS keys,
                 (SELECT count(*) FROM ${sql.id(database.schema, "chaos_effect_runs")}) AS body_runs`,
        );
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, run.idleInTransaction);
        verdict.check(drained, "the queue did not drain within 4 minutes");
        verdict.check(killer.kills >= p.kills, `only ${killer.kills} kills happened before the queue drained (wanted ${p.kills})`);
        verdict.check(states["succeeded"] === p.jobs, `succeeded ${states["succeeded"] ?? 0} of ${p.jobs} (${JSON.stringify(states)})`);
        verdict.check(
          invariants.reExecutions <= killer.inFlightAtKills,
          `${invariants.reExecutions} re-executions, more than the ${killer.inFlightAtKills} jobs in flight at the kills`,
        );
        verdict.check(effects.rows === p.jobs && effects.keys === p.jobs, `effects applied ${effects.rows} times for ${effects.keys} of ${p.jobs} keys`);
        verdict.note(
          `${killer.kills} SIGKILLs over the first ${(killer.lastKillAfterMs / 1_000).toFixed(1)} s of a ${(runMs / 1_000).toFixed(1)} s run, ${supervisor.restarts} restarts`,
        );
        verdict.note(`re-executions ${invariants.reExecutions} ≤ ${killer.inFlightAtKills} in flight at the kills`);
        verdict.note(`effects applied ${effects.rows}/${p.jobs} (bodies run ${effects.body_runs}: ${effects.body_runs - effects.keys} rolled back by kills)`);
        return {
          jobs: p.jobs,
          faults: `${killer.kills} × SIGKILL`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + (effects.rows - effects.keys),
          reExecutions: invariants.reExecutions,
          verdict,
        };
      });
    });
  },
};
