import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunReport } from "@stint/core";
import { sql } from "kysely";
import { checkInvariants, idleInTransaction } from "../harness/invariants";
import { eventually } from "@stint/core/testing";
import { enqueueTasks, figures, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { withChaosDatabase } from "../harness/scenario-run";
import { Supervisor } from "../harness/supervisor";

/**
 * 5. A handler blocks its process's event loop (a synchronous busy loop)
 * for two leases and on until a second worker has taken its jobs, so no
 * heartbeat can run: the second worker takes the jobs when the lease runs
 * out and finishes them; when the first worker wakes up, its late outcomes
 * match no row (fenced on owner and attempt) and the final state of every
 * job is the second worker's. Both workers' claims wait for their flush
 * (see `ChaosWorkerSettings.durableClaims`).
 */
export const eventLoopBlock: Scenario = {
  id: 5,
  title: "event loop blocked past the lease",
  claim:
    "a handler blocks the event loop past its lease: another worker takes the job; the first worker's late completion applies to 0 rows; the final state is the second worker's",
  async run({ connectionString, profile, log }) {
    const p = profile.eventLoopBlock;
    const blockMs = 2 * p.leaseMs;
    const releaseDir = mkdtempSync(join(tmpdir(), "stint-chaos-"));
    const releaseFile = join(releaseDir, "taken-over");
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      const jobs = sql.id(schema, "all_jobs");
      await enqueueTasks(
        database,
        range(p.jobs).map((seq) => (seq === 0 ? { seq, action: "block", ms: 0, firstMs: blockMs } : { seq, action: "sleep", ms: 20, firstMs: 100 })),
        { maxAttempts: 5 },
      );
      const first = new Supervisor({
        connectionString,
        schema,
        processes: 1,
        restart: false,
        settings: { mode: "once", concurrency: p.jobs, leaseMs: p.leaseMs, releaseFile, durableClaims: true },
      });
      const second = new Supervisor({
        connectionString,
        schema,
        processes: 1,
        restart: false,
        settings: { mode: "loop", concurrency: p.jobs, leaseMs: p.leaseMs, pollIntervalMs: 100, durableClaims: true },
      });
      try {
        await first.start();
        const a = first.all[0]!;
        await eventually(
          async () => (await figures(db, sql<{ n: number }>`SELECT count(*) AS n FROM ${jobs} WHERE state = 'running' AND attempts = 1`)).n === p.jobs,
          { timeoutMs: 20_000, intervalMs: 20, what: "the first worker to claim every job" },
        );
        await second.start();
        const b = second.all[0]!;
        await eventually(
          async () =>
            (await figures(db, sql<{ n: number }>`SELECT count(*) AS n FROM ${jobs} WHERE attempts = 2 AND locked_by = ${b.workerId()!}`)).n === p.jobs,
          { timeoutMs: 30_000, intervalMs: 20, what: "the second worker to take every job" },
        );
        // The busy loop ends at the later of its minimum and this release; measured on the database's clock from its start.
        const { ms: sinceBlockStarted } = await figures(
          db,
          sql<{ ms: number }>`
          SELECT extract(epoch FROM clock_timestamp() - started_at) * 1000 AS ms
            FROM ${sql.id(schema, "chaos_executions")} WHERE seq = 0 AND attempt = 1`,
        );
        writeFileSync(releaseFile, "");
        const blockedMs = Math.max(blockMs, sinceBlockStarted);
        const [aExit, aReport] = await Promise.all([a.node.exited, a.node.event("report", 60_000).catch(() => undefined)]);
        await eventually(async () => (await figures(db, sql<{ n: number }>`SELECT count(*) AS n FROM ${jobs} WHERE state = 'succeeded'`)).n === p.jobs, {
          timeoutMs: 30_000,
          intervalMs: 100,
          what: "the second worker to finish every job",
        });
        const idle = await idleInTransaction(db);
        await second.stop();
        const invariants = await checkInvariants(database, p.jobs);
        const aId = a.workerId()!;
        const bId = b.workerId()!;
        const totals = (aReport?.["report"] as RunReport | undefined)?.totals;
        log(`  first worker: ${JSON.stringify(totals)}, exit ${aExit.code}`);
        const final = await figures(
          db,
          sql<{ by_second: number; results_by_second: number; writes_by_first: number; late_claims: number }>`
          SELECT (SELECT count(*) FROM ${jobs} WHERE state = 'succeeded' AND attempts = 2 AND locked_by = ${bId}) AS by_second,
                 (SELECT count(*) FROM ${jobs} WHERE result->>'by' = ${bId}) AS results_by_second,
                 -- A lease rescue by the second process keeps the first as the last owner: it is not the first worker's write.
                 (SELECT count(*) FROM ${sql.id(schema, "chaos_transitions")}
                   WHERE locked_by = ${aId} AND new_state <> 'running' AND error_code IS DISTINCT FROM 'STINT_WORKER_DIED') AS writes_by_first,
                 (SELECT count(*) FROM ${sql.id(schema, "chaos_transitions")} t
                   WHERE t.locked_by = ${bId} AND t.new_state = 'running'
                     AND t.started_at < (SELECT min(started_at) FROM ${sql.id(schema, "chaos_transitions")} WHERE locked_by = ${aId}) + ${p.leaseMs} * interval '1 millisecond') AS late_claims`,
        );

        const verdict = new Verdict();
        verdict.invariants(invariants, idle);
        verdict.check(final.by_second === p.jobs, `${final.by_second} of ${p.jobs} jobs ended succeeded on attempt 2 under the second worker`);
        verdict.check(final.results_by_second === p.jobs, `${final.results_by_second} of ${p.jobs} results written by the second worker`);
        verdict.check(final.writes_by_first === 0, `the first worker changed ${final.writes_by_first} jobs after losing them`);
        verdict.check(final.late_claims === 0, `${final.late_claims} jobs were taken over before the first worker's lease ran out`);
        verdict.check(
          totals?.leaseLost === p.jobs && totals.succeeded === 0,
          `the first worker reported ${JSON.stringify(totals)}, expected ${p.jobs} lease lost and 0 succeeded`,
        );
        verdict.check(invariants.reExecutions === p.jobs, `${invariants.reExecutions} re-executions, expected ${p.jobs} (one per job taken over)`);
        verdict.note(`event loop blocked ${(blockedMs / 1_000).toFixed(1)} s, lease ${p.leaseMs / 1_000} s`);
        verdict.note(
          `late outcomes of the first worker: ${totals?.leaseLost ?? "?"} applied to 0 rows; final state by the second worker ${final.by_second}/${p.jobs}`,
        );
        return {
          jobs: p.jobs,
          faults: `event loop blocked ${(blockedMs / 1_000).toFixed(1)} s`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + final.writes_by_first,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      } finally {
        await Promise.all([first.abort(), second.abort()]);
        rmSync(releaseDir, { recursive: true, force: true });
      }
    });
  },
};
