import { sql, type Kysely } from "kysely";
import type { ThrowawayPostgres } from "@stint/throwaway-postgres";
import { eventually } from "@stint/core/testing";
import { databaseNow, enqueueTasks, figures, jobStates, range, sleep } from "../harness/jobs";
import { startOwnPostgres } from "../harness/own-postgres";
import { Verdict, type Scenario } from "../harness/scenario";
import { drainWithFaults, settle, withChaosDatabase, withSupervisor } from "../harness/scenario-run";

/** The name the primary's `synchronous_standby_names` gives its standby. */
const STANDBY_NAME = "stint_standby";

/**
 * 16. A synchronous pair whose standby goes down under running workers:
 * the suite starts its own primary and a streaming standby of it, makes
 * the standby synchronous, and stops it (`-m immediate`) for `leases` ×
 * leaseMs mid-drain. Every synchronous commit (outcomes, heartbeats) then
 * waits, while a claim that skips its flush would still commit: the
 * workers must stop claiming within one lease of the standby going down,
 * so no job is moved to `running` that no one can finish. With the
 * standby back, every job finishes and none is lost or finished twice.
 */
export const standbyDown: Scenario = {
  id: 16,
  title: "synchronous standby down",
  claim:
    "the synchronous standby stopped for several leases mid-drain: claims stop within one lease (no job moved to running that no one can finish); with the standby back every job finishes; 0 lost",
  async run({ profile, log }) {
    const p = profile.standbyDown;
    const primary = await startOwnPostgres();
    let standby: ThrowawayPostgres | undefined;
    try {
      standby = await primary.startStandby(STANDBY_NAME);
      const replica = standby;
      return await withChaosDatabase(primary.connectionString, async (database) => {
        const { db, schema } = database;
        await makeSynchronous(db);
        await enqueueTasks(
          database,
          range(p.jobs).map((seq) => ({ seq, action: "sleep", ms: p.handlerMs })),
          { maxAttempts: 10 },
        );
        const settings = { mode: "loop", concurrency: p.concurrency, leaseMs: p.leaseMs, pollIntervalMs: 200, shutdownTimeoutMs: 2_000 } as const;
        return withSupervisor(database, { processes: p.processes, settings, restart: false }, async (supervisor) => {
          const jobs = sql.id(schema, "jobs");
          await eventually(async () => ((await jobStates(database))["succeeded"] ?? 0) >= p.jobs / 5, {
            timeoutMs: 60_000,
            intervalMs: 50,
            what: "a fifth of the jobs to succeed with the standby up",
          });
          await replica.shutDown("immediate");
          let limbo: Record<"running" | "claimed_after_down" | "last_claim_ms", number>;
          try {
            const downAt = await databaseNow(db);
            log(`  stopped the synchronous standby; holding it down for ${p.leases} × ${p.leaseMs} ms`);
            await sleep(p.leases * p.leaseMs);
            // Every claim sets locked_until to its own time plus the lease; a heartbeat that would move it cannot commit now.
            limbo = await figures(
              db,
              sql<{ running: number; claimed_after_down: number; last_claim_ms: number }>`
              SELECT count(*) AS running,
                     count(*) FILTER (WHERE locked_until - ${p.leaseMs} * interval '1 millisecond' > ${downAt}) AS claimed_after_down,
                     coalesce(extract(epoch FROM max(locked_until) - ${p.leaseMs} * interval '1 millisecond' - ${downAt}::timestamptz) * 1000, 0) AS last_claim_ms
                FROM ${jobs} WHERE state = 'running'`,
            );
          } finally {
            // Back up whatever happened: with it down, every commit of the clean-up would wait for ever.
            await replica.startUp();
          }
          const drained = await drainWithFaults(database, { timeoutMs: 120_000, tickMs: 100 });
          const exitedDuringRun = supervisor.unexpectedExits.length;
          const run = await settle(database, supervisor, p.jobs);
          const { invariants } = run;
          const states = await jobStates(database);

          const verdict = new Verdict();
          verdict.invariants(invariants, run.idleInTransaction);
          verdict.check(
            limbo.last_claim_ms <= p.leaseMs,
            `a claim committed ${Math.round(limbo.last_claim_ms)} ms after the standby went down (the bound is one lease, ${p.leaseMs} ms); ${limbo.claimed_after_down} jobs were claimed after it went down`,
          );
          verdict.check(drained, "the queue did not drain within 2 minutes of the standby's return");
          verdict.check(exitedDuringRun === 0, `${exitedDuringRun} worker processes exited during the run`);
          verdict.check(states["succeeded"] === p.jobs, `succeeded ${states["succeeded"] ?? 0} of ${p.jobs} (${JSON.stringify(states)})`);
          verdict.note(`standby down ${p.leases} × ${p.leaseMs} ms`);
          verdict.note(
            `last claim ${Math.max(0, Math.round(limbo.last_claim_ms))} ms after it went down, ${limbo.claimed_after_down} jobs claimed after, ${limbo.running} running at the end of the outage`,
          );
          verdict.note(`re-executions ${invariants.reExecutions}`);
          return {
            jobs: p.jobs,
            faults: `standby down ${((p.leases * p.leaseMs) / 1_000).toFixed(0)} s`,
            lost: invariants.lost,
            duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
            reExecutions: invariants.reExecutions,
            verdict,
          };
        });
      });
    } finally {
      await standby?.stop();
      await primary.stop();
    }
  },
};

/** Makes the standby synchronous and waits until the primary says it is. */
async function makeSynchronous(db: Kysely<any>): Promise<void> {
  await sql`ALTER SYSTEM SET synchronous_standby_names = ${sql.lit(STANDBY_NAME)}`.execute(db);
  await sql`SELECT pg_reload_conf()`.execute(db);
  await eventually(
    async () => {
      const { rows } = await sql<{ sync_state: string }>`SELECT sync_state FROM pg_stat_replication WHERE application_name = ${STANDBY_NAME}`.execute(db);
      return rows[0]?.sync_state === "sync";
    },
    { timeoutMs: 30_000, intervalMs: 50, what: "the standby to stream as the synchronous one" },
  );
}
