import type { RunReport } from "@stint/core";
import { sql } from "kysely";
import { checkInvariants, idleInTransaction } from "../harness/invariants";
import { eventually } from "@stint/core/testing";
import { enqueueTasks, figures, jobStates, range } from "../harness/jobs";
import { Verdict, type Scenario } from "../harness/scenario";
import { withChaosDatabase } from "../harness/scenario-run";
import { Supervisor } from "../harness/supervisor";

/** Time a process may take beyond its shutdown timeout to give its jobs back and close its connections. */
const EXIT_SLACK_MS = 3_000;

/**
 * 6. SIGTERM to worker processes whose every slot runs a one-minute job —
 * half of them honour their abort signal, half ignore it: each process
 * exits within its shutdown timeout (plus a little to close), gives every
 * job back without spending its attempt, and leaves no row running under its
 * name. A fresh process then finishes them all.
 */
export const gracefulShutdown: Scenario = {
  id: 6,
  title: "SIGTERM with long jobs in flight",
  claim:
    "SIGTERM while every slot runs a 60 s job (half ignore their abort signal): exit within the shutdown deadline; 0 rows left running owned by the exited workers; the jobs run again elsewhere",
  async run({ connectionString, profile, log }) {
    const p = profile.gracefulShutdown;
    const total = p.processes * p.concurrency;
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      const jobs = sql.id(schema, "all_jobs");
      await enqueueTasks(
        database,
        range(total).map((seq) => ({ seq, action: seq % 2 === 0 ? "sleep" : "ignore-signal", ms: 20, firstMs: 60_000 })),
        { maxAttempts: 3 },
      );
      // No prefetch: each process claims only for its slots, so every slot of every process runs a job (scenario 15 covers the buffer).
      const settings = {
        mode: "loop",
        concurrency: p.concurrency,
        prefetch: 0,
        leaseMs: 10_000,
        pollIntervalMs: 100,
        shutdownTimeoutMs: p.shutdownTimeoutMs,
      } as const;
      const workers = new Supervisor({ connectionString, schema, processes: p.processes, restart: false, settings });
      const drainer = new Supervisor({
        connectionString,
        schema,
        processes: 1,
        restart: false,
        settings: { mode: "once", concurrency: total, leaseMs: 10_000 },
      });
      try {
        await workers.start();
        await eventually(async () => (await figures(db, sql<{ n: number }>`SELECT count(*) AS n FROM ${jobs} WHERE state = 'running'`)).n === total, {
          timeoutMs: 20_000,
          intervalMs: 20,
          what: "every slot to be busy",
        });
        const idle = await idleInTransaction(db);
        const signalled = Date.now();
        const stopped = await Promise.all(
          workers.live.map(async (worker) => {
            const exit = await workers.kill(worker, "SIGTERM");
            const report = (await worker.node.event("report", 1_000).catch(() => undefined))?.["report"] as RunReport | undefined;
            return { worker, exit, report, exitMs: exit.at - signalled };
          }),
        );
        const owned = await figures(
          db,
          sql<{ running: number; released: number }>`
          SELECT count(*) FILTER (WHERE state = 'running' AND locked_by = ANY(${stopped.map(({ worker }) => worker.workerId()!)}::text[])) AS running,
                 count(*) FILTER (WHERE state = 'queued' AND attempts = 1 AND max_attempts = 4) AS released
            FROM ${jobs}`,
        );
        const exitTimes = stopped.map(({ exitMs }) => `${(exitMs / 1_000).toFixed(1)} s`).join(", ");
        log(`  exited after ${exitTimes}; ${owned.running} rows left running, ${owned.released} released`);
        await drainer.start();
        await drainer.all[0]!.node.exited;
        const invariants = await checkInvariants(database, total);
        const states = await jobStates(database);

        const verdict = new Verdict();
        verdict.invariants(invariants, idle);
        const deadline = p.shutdownTimeoutMs + EXIT_SLACK_MS;
        verdict.check(
          stopped.every(({ exitMs }) => exitMs <= deadline),
          `exit times ${exitTimes}, deadline ${deadline / 1_000} s`,
        );
        verdict.check(
          stopped.every(({ exit }) => exit.code === 0),
          `exit codes ${stopped.map(({ exit }) => exit.code ?? exit.signal).join(", ")}`,
        );
        verdict.check(owned.running === 0, `${owned.running} rows left running owned by the exited workers`);
        verdict.check(owned.released === total, `${owned.released} of ${total} jobs given back with their attempt unspent`);
        const released = stopped.reduce((sum, { report }) => sum + (report?.totals.released ?? 0), 0);
        verdict.check(released === total, `the processes reported ${released} released jobs, expected ${total}`);
        verdict.check(states["succeeded"] === total, `succeeded ${states["succeeded"] ?? 0} of ${total} after the restart`);
        verdict.note(`exit after SIGTERM: ${exitTimes} (shutdown timeout ${p.shutdownTimeoutMs / 1_000} s)`);
        verdict.note(`${owned.running} rows left running, ${owned.released}/${total} released unspent and finished by a fresh process`);
        return {
          jobs: total,
          faults: `${stopped.length} × SIGTERM`,
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      } finally {
        await Promise.all([workers.abort(), drainer.abort()]);
      }
    });
  },
};
