import { resolveWorkerOptions } from "@stint/core/internal";
import { sql } from "kysely";
import type { ChaosDatabase } from "../harness/chaos-database";
import { checkInvariants, idleInTransaction } from "../harness/invariants";
import { eventually } from "@stint/core/testing";
import { enqueueTasks, figures, range, sleep } from "../harness/jobs";
import { runOverlaps } from "../harness/run-overlaps";
import { shutdownExitBound } from "../harness/shutdown-bound";
import { Verdict, type Scenario } from "../harness/scenario";
import { withChaosDatabase } from "../harness/scenario-run";
import { Supervisor } from "../harness/supervisor";
import { TcpProxy } from "../harness/tcp-proxy";
import { FAIL_FAST_DRIVER } from "../worker/chaos-app";

/**
 * Beyond its shutdown timeout and give-back bound, what the process's exit
 * may take: the driver's bounded close (1 s over a dead network) and a
 * second of scheduling on a loaded machine.
 */
const EXIT_SLACK_MS = 2_000;

/**
 * How long after its local deadline a cut-off handler may still run. The
 * worker's local deadline (send time of the last confirmed claim or
 * renewal + leaseMs − margin) is at or before the lease that statement set
 * in the database minus the margin, so a handler that stops within this of
 * its local deadline stops within this of that bound.
 */
const STOP_TOLERANCE_MS = 100;

/**
 * 13. Every connection of worker A (pools, LISTEN, leader lock) goes
 * through a TCP proxy that is switched to a black hole — sockets open, no
 * byte moving, no RST or FIN — for 3 × leaseMs while A runs long
 * handlers; worker B, connected directly, takes the jobs once their leases
 * run out. A's oracle writes go directly to the server, so each handler
 * records when it saw its signal abort. Then the proxy forwards again: B
 * is stopped and A must run new jobs itself, on their first attempt (no
 * zombie left by the cut). Last, with jobs in flight, A is cut off again
 * and sent one SIGTERM: it must exit within its shutdown timeout plus the
 * bounded give-back time.
 */
export const connectionBlackHole: Scenario = {
  id: 13,
  title: "connections black-holed, then healed",
  claim:
    "a worker's connections black-holed for 3 × leaseMs: its handlers stop before their database lease runs out and never overlap the takeover; after the cut heals it runs new jobs itself; cut again, SIGTERM exits within the shutdown bound",
  async run({ connectionString, profile, log }) {
    const p = profile.blackHole;
    const total = p.jobs + p.healedJobs + p.stopJobs;
    const margin = resolveWorkerOptions({ leaseMs: p.leaseMs }).leaseMarginMs;
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      const jobs = sql.id(schema, "all_jobs");
      const proxy = await TcpProxy.start(connectionString);
      const settings = {
        mode: "loop",
        concurrency: p.jobs + p.stopJobs,
        leaseMs: p.leaseMs,
        pollIntervalMs: 100,
        shutdownTimeoutMs: p.shutdownTimeoutMs,
        driver: FAIL_FAST_DRIVER,
      } as const;
      const cutOff = new Supervisor({
        connectionString: proxy.connectionString,
        oracleConnectionString: connectionString,
        schema,
        processes: 1,
        restart: false,
        settings,
      });
      const direct = new Supervisor({ connectionString, schema, processes: 1, restart: false, settings });
      const finisher = new Supervisor({ connectionString, schema, processes: 1, restart: false, settings: { ...settings, driver: {} } });
      try {
        await cutOff.start();
        const a = cutOff.all[0]!;
        const aId = a.workerId()!;

        // Part 1: A holds long handlers; its network goes silent; B takes over when the leases run out.
        await enqueueTasks(
          database,
          range(p.jobs).map((seq) => ({ seq, action: "sleep-timed", ms: 50, firstMs: 60_000 })),
          { maxAttempts: 3 },
        );
        await waitForRuns(database, aId, 0, p.jobs, "A to start every long handler");
        await direct.start();
        const bId = direct.all[0]!.workerId()!;
        proxy.blackHole();
        const cutAt = Date.now();
        await eventually(async () => (await succeeded(database, 0, p.jobs)) === p.jobs, {
          timeoutMs: 30_000,
          intervalMs: 50,
          what: "B to take over and finish every job",
        });
        // The fault lasts 3 × leaseMs, or longer if the takeover took longer.
        await sleep(cutAt + 3 * p.leaseMs - Date.now());
        proxy.forward();
        const cutMs = Date.now() - cutAt;
        // When each handler of A stopped, against its lease: the last `locked_until` A set for that attempt.
        const cut = await figures(
          db,
          sql<{ runs: number; lease_lost: number; latest_stop_ms: number; earliest_stop_ms: number; late: number; taken_by_b: number }>`
          SELECT count(*) AS runs,
                 count(*) FILTER (WHERE e.ended_how = 'aborted:STINT_LEASE_LOST') AS lease_lost,
                 max(extract(epoch FROM e.ended_at - l.until) * 1000) AS latest_stop_ms,
                 min(extract(epoch FROM e.ended_at - l.until) * 1000) AS earliest_stop_ms,
                 count(*) FILTER (WHERE e.ended_at IS NULL
                                     OR e.ended_at > l.until + ${STOP_TOLERANCE_MS - margin} * interval '1 millisecond') AS late,
                 (SELECT count(*) FROM ${jobs} WHERE (payload->>'seq')::int < ${p.jobs} AND state = 'succeeded' AND attempts = 2 AND locked_by = ${bId}) AS taken_by_b
            FROM ${sql.id(schema, "chaos_executions")} e
            JOIN (SELECT job_id, attempt, max(locked_until) AS until FROM ${sql.id(schema, "chaos_leases")} WHERE locked_by = ${aId} GROUP BY job_id, attempt) l
              ON l.job_id = e.job_id AND l.attempt = e.attempt
           WHERE e.worker_id = ${aId} AND e.seq < ${p.jobs}`,
        );

        // Part 2: the cut has healed; with B gone, A alone runs new jobs, each on its first attempt.
        await direct.stop();
        const healedAt = Date.now();
        await enqueueTasks(
          database,
          range(p.healedJobs).map((i) => ({ seq: p.jobs + i, action: "sleep-timed", ms: 100 })),
        );
        await eventually(async () => (await succeeded(database, p.jobs, p.healedJobs)) === p.healedJobs, {
          timeoutMs: 30_000,
          intervalMs: 50,
          what: "A to run the new jobs after the cut healed",
        });
        const healedMs = Date.now() - healedAt;
        const healed = await figures(
          db,
          sql<{ by_a: number }>`
          SELECT count(*) AS by_a FROM ${jobs}
           WHERE (payload->>'seq')::int >= ${p.jobs} AND state = 'succeeded' AND attempts = 1 AND locked_by = ${aId} AND result->>'by' = ${aId}`,
        );
        const idle = await idleInTransaction(db);

        // Part 3: jobs in flight, the network cut again, one SIGTERM.
        const firstStop = p.jobs + p.healedJobs;
        await enqueueTasks(
          database,
          range(p.stopJobs).map((i) => ({ seq: firstStop + i, action: "sleep-timed", ms: 50, firstMs: 60_000 })),
          { maxAttempts: 3 },
        );
        await waitForRuns(database, aId, firstStop, p.stopJobs, "A to start the jobs in flight at the stop");
        proxy.blackHole();
        const signalled = Date.now();
        a.signalledBy = "SIGTERM";
        a.node.kill("SIGTERM");
        const exit = await Promise.race([a.node.exited, sleep(30_000).then(() => undefined)]);
        const exitMs = (exit?.at ?? Date.now()) - signalled;
        const reported = a.node.lines.some((line) => line.startsWith('{"event":"report"'));
        if (exit === undefined)
          log(
            `  A still running ${exitMs} ms after SIGTERM (${reported ? "after" : "before"} its run report); its last lines:\n${a.node.lines.slice(-5).join("\n")}`,
          );
        proxy.forward();
        await finisher.start();
        await eventually(async () => (await succeeded(database, firstStop, p.stopJobs)) === p.stopJobs, {
          timeoutMs: 30_000,
          intervalMs: 50,
          what: "a fresh worker to finish the jobs given up at the stop",
        });
        await finisher.stop();

        const invariants = await checkInvariants(database, total);
        const overlaps = await runOverlaps(database);
        const exitBound = shutdownExitBound(p, EXIT_SLACK_MS);
        log(
          `  cut ${cutMs} ms; A's handlers stopped ${-Number(cut.latest_stop_ms.toFixed(0))}–${-Number(cut.earliest_stop_ms.toFixed(0))} ms before their database lease ran out; exit ${exitMs} ms`,
        );

        const verdict = new Verdict();
        verdict.invariants(invariants, idle);
        verdict.check(
          cut.runs === p.jobs && cut.lease_lost === p.jobs,
          `${cut.lease_lost} of ${p.jobs} handlers of A (${cut.runs} runs) saw their signal abort with STINT_LEASE_LOST`,
        );
        verdict.check(
          cut.late === 0,
          `${cut.late} handlers of A still ran ${STOP_TOLERANCE_MS} ms after their local deadline (their last database lease − ${margin} ms); ` +
            `the latest stopped ${(cut.latest_stop_ms + margin).toFixed(0)} ms after it`,
        );
        verdict.check(overlaps.overlaps === 0, `${overlaps.overlaps} times a job's handler started while an earlier run of it was still running`);
        verdict.check(overlaps.unended === 0, `${overlaps.unended} of ${overlaps.runs} handler runs recorded no end`);
        verdict.check(cut.taken_by_b === p.jobs, `${cut.taken_by_b} of ${p.jobs} cut-off jobs finished by B on attempt 2`);
        verdict.check(healed.by_a === p.healedJobs, `after the cut healed, ${healed.by_a} of ${p.healedJobs} new jobs ran on attempt 1 under A`);
        const exitCode = exit === undefined ? "none (still running)" : (exit.code ?? exit.signal);
        verdict.check(exitMs <= exitBound && exit?.code === 0, `SIGTERM under the cut: exit ${exitCode} after ${exitMs} ms, bound ${exitBound} ms`);
        verdict.note(
          `cut ${(cutMs / 1_000).toFixed(1)} s, lease ${p.leaseMs / 1_000} s (margin ${margin} ms): ${cut.lease_lost}/${p.jobs} handlers stopped ` +
            `${-Number(cut.latest_stop_ms.toFixed(0))}–${-Number(cut.earliest_stop_ms.toFixed(0))} ms before their database lease ran out ` +
            `(at most ${(cut.latest_stop_ms + margin).toFixed(0)} ms after lease − margin); ${overlaps.overlaps} overlapping runs; B finished ${cut.taken_by_b}/${p.jobs}`,
        );
        verdict.note(`healed: ${healed.by_a}/${p.healedJobs} new jobs on attempt 1 under A within ${(healedMs / 1_000).toFixed(1)} s`);
        verdict.note(
          `SIGTERM cut off with ${p.stopJobs} jobs in flight: exit after ${(exitMs / 1_000).toFixed(1)} s (bound ${(exitBound / 1_000).toFixed(1)} s)`,
        );
        return {
          jobs: total,
          faults: `2 × black hole, 1 × SIGTERM`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + overlaps.overlaps,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      } finally {
        proxy.forward();
        await Promise.all([cutOff.abort(), direct.abort(), finisher.abort()]);
        await proxy.close();
      }
    });
  },
};

/** Waits until `count` handlers of `workerId` for the jobs `first`… have recorded their start. */
async function waitForRuns(database: ChaosDatabase, workerId: string, first: number, count: number, what: string): Promise<void> {
  const executions = sql.id(database.schema, "chaos_executions");
  await eventually(
    async () =>
      (
        await figures(
          database.db,
          sql<{ n: number }>`
        SELECT count(*) AS n FROM ${executions} WHERE worker_id = ${workerId} AND seq >= ${first} AND seq < ${first + count}`,
        )
      ).n === count,
    { timeoutMs: 20_000, intervalMs: 20, what },
  );
}

/** Jobs `first`… `first + count − 1` that succeeded. */
async function succeeded(database: ChaosDatabase, first: number, count: number): Promise<number> {
  const { n } = await figures(
    database.db,
    sql<{ n: number }>`
    SELECT count(*) AS n FROM ${sql.id(database.schema, "all_jobs")}
     WHERE state = 'succeeded' AND (payload->>'seq')::int >= ${first} AND (payload->>'seq')::int < ${first + count}`,
  );
  return n;
}
