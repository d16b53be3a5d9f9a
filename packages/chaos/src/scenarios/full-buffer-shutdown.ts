import type { RunReport } from "@stint/core";
import { sql } from "kysely";
import type { ChaosDatabase } from "../harness/chaos-database";
import { checkInvariants, idleInTransaction } from "../harness/invariants";
import { describeTrail, jobTrails, type TrailStep } from "../harness/job-trails";
import { eventually } from "@stint/core/testing";
import { databaseNow, enqueueTasks, figures, range, runningOwnedBy, sleep } from "../harness/jobs";
import { runOverlaps } from "../harness/run-overlaps";
import { Verdict, type Scenario } from "../harness/scenario";
import { withChaosDatabase } from "../harness/scenario-run";
import { shutdownExitBound } from "../harness/shutdown-bound";
import { Supervisor } from "../harness/supervisor";

/** How soon after SIGTERM every buffered job must be back in the queue, due at once. */
const CLAIMABLE_WITHIN_MS = 1_000;

/** Beyond the shutdown timeout and the give-back bound, what closing the connections and exiting may take on a loaded machine. */
const EXIT_SLACK_MS = 2_000;

/** The jobs' `maxAttempts` at enqueue: a give-back raises it by one. */
const MAX_ATTEMPTS = 3;

/** How every job's audit trail must read: claimed by A, given back unspent, claimed by B on the next attempt, succeeded. */
const EXPECTED_TRAIL = describeTrail(
  [
    { state: "running", owner: "A", attempts: 1, maxAttempts: MAX_ATTEMPTS },
    // The give-back clears the lease but leaves `locked_by`: the job is claimable because it is `queued` and due.
    { state: "queued", owner: "A", attempts: 1, maxAttempts: MAX_ATTEMPTS + 1 },
    { state: "running", owner: "B", attempts: 2, maxAttempts: MAX_ATTEMPTS + 1 },
    { state: "succeeded", owner: "B", attempts: 2, maxAttempts: MAX_ATTEMPTS + 1 },
  ].map((step) => ({ ...step, errorCode: null, due: true, leased: step.state === "running" })),
);

/**
 * 15. Worker A claims `concurrency + prefetch` long jobs in one statement:
 * `concurrency` handlers start, the rest wait in its local buffer, leased
 * and `running` under its name. Worker B, idle, polls the same queue. One
 * SIGTERM to A: the buffered jobs must be back in the queue at once —
 * `queued`, due, their attempt not spent (`attempts` as A claimed it,
 * `max_attempts` one higher) — while A's running handlers get the shutdown
 * timeout, then are given back the same way. B runs every job on the next
 * attempt, with no failure recorded. The time a buffered job became
 * claimable is the time its give-back committed, read from the audit
 * trigger on the database's clock, against the database's clock read just
 * before the signal: the harness's poll and B's poll interval add nothing
 * to it, and no second clock is involved.
 */
export const fullBufferShutdown: Scenario = {
  id: 15,
  title: "SIGTERM with a full prefetch buffer",
  claim:
    "SIGTERM to a worker with full slots and a full prefetch buffer: every buffered job is back in the queue within 1 s, its attempt unspent; running handlers get the shutdown timeout and go back unspent too; another worker runs them all on the next attempt; exit within the shutdown bound",
  async run({ connectionString, profile, log }) {
    const p = profile.fullBufferShutdown;
    const capacity = p.concurrency + p.prefetch;
    return withChaosDatabase(connectionString, async (database) => {
      const { db, schema } = database;
      await enqueueTasks(
        database,
        range(capacity).map((seq) => ({ seq, action: "sleep-timed", ms: 50, firstMs: 60_000 })),
        { maxAttempts: MAX_ATTEMPTS },
      );
      const settings = {
        mode: "loop",
        concurrency: p.concurrency,
        prefetch: p.prefetch,
        leaseMs: p.leaseMs,
        pollIntervalMs: 100,
        shutdownTimeoutMs: p.shutdownTimeoutMs,
      } as const;
      const first = new Supervisor({ connectionString, schema, processes: 1, restart: false, settings });
      const second = new Supervisor({ connectionString, schema, processes: 1, restart: false, settings: { ...settings, concurrency: capacity, prefetch: 0 } });
      try {
        // A's first claim takes the whole backlog: `concurrency` handlers start, the rest stay buffered.
        await first.start();
        const a = first.all[0]!;
        const aId = a.workerId()!;
        await eventually(
          async () => {
            const held = await holding(database, aId);
            return held.running === capacity && held.started >= p.concurrency;
          },
          { timeoutMs: 20_000, intervalMs: 20, what: "A to fill its slots and its buffer" },
        );
        // B is up and idle before the signal: nothing is due until A gives jobs back.
        await second.start();
        const bId = second.all[0]!.workerId()!;
        const full = await holding(database, aId);
        const idle = await idleInTransaction(db);

        const signalledDb = await databaseNow(db);
        const signalled = Date.now();
        a.signalledBy = "SIGTERM";
        a.node.kill("SIGTERM");
        const exit = await Promise.race([a.node.exited, sleep(30_000).then(() => undefined)]);
        const exitMs = (exit?.at ?? Date.now()) - signalled;
        const leftRunning = await runningOwnedBy(database, aId);
        const report = (await a.node.event("report", 1_000).catch(() => undefined))?.["report"] as RunReport | undefined;
        await eventually(async () => (await succeeded(database)) === capacity, { timeoutMs: 30_000, intervalMs: 50, what: "B to finish every job given back" });
        await second.stop();

        const invariants = await checkInvariants(database, capacity);
        const overlaps = await runOverlaps(database);
        const runs = await handlerRuns(database, signalledDb.getTime());
        const trails = await jobTrails(database, signalledDb, { [aId]: "A", [bId]: "B" });
        const startedByA = new Set(runs.filter((run) => run.workerId === aId).map((run) => run.jobId));
        const buffered = [...trails.keys()].filter((jobId) => !startedByA.has(jobId));
        const giveBackMs = (jobIds: readonly string[]): number[] => jobIds.map((jobId) => trails.get(jobId)?.[1]?.afterMs ?? Infinity);
        const bufferedBackMs = giveBackMs(buffered);
        const runningBackMs = giveBackMs([...startedByA]);
        const offTrail = [...trails.entries()].filter(([, steps]) => !onTrail(steps));
        const missingTrails = capacity - trails.size;
        const pickedUpMs = runs.filter((run) => run.workerId === bId && !startedByA.has(run.jobId)).map((run) => run.startedAfterMs);
        const aRuns = runs.filter((run) => run.workerId === aId);
        const exitBound = shutdownExitBound(p, EXIT_SLACK_MS);
        log(`  buffered given back ${span(bufferedBackMs)} ms after SIGTERM, running ${span(runningBackMs)} ms; exit ${exitMs} ms`);

        const verdict = new Verdict();
        verdict.invariants(invariants, idle);
        verdict.check(
          full.running === capacity && full.started === p.concurrency,
          `before the signal A held ${full.running} running jobs (expected ${capacity}) and had started ${full.started} handlers (expected ${p.concurrency})`,
        );
        verdict.check(
          aRuns.length === p.concurrency,
          `A started ${aRuns.length} handlers in all, expected ${p.concurrency}: it must never start a buffered job`,
        );
        verdict.check(buffered.length === p.prefetch, `${buffered.length} jobs buffered by A, expected ${p.prefetch}`);
        verdict.check(
          bufferedBackMs.every((ms) => ms <= CLAIMABLE_WITHIN_MS),
          `buffered jobs back in the queue ${span(bufferedBackMs)} ms after SIGTERM, bound ${CLAIMABLE_WITHIN_MS} ms`,
        );
        verdict.check(
          runningBackMs.every((ms) => ms >= p.shutdownTimeoutMs),
          `running jobs given back ${span(runningBackMs)} ms after SIGTERM, before their ${p.shutdownTimeoutMs} ms shutdown timeout`,
        );
        verdict.check(
          aRuns.every((run) => run.endedHow === "aborted:STINT_SHUTDOWN"),
          `A's handlers ended ${aRuns.map((run) => run.endedHow ?? "never").join(", ")}; expected aborted:STINT_SHUTDOWN`,
        );
        verdict.check(
          offTrail.length === 0 && missingTrails === 0,
          `${offTrail.length + missingTrails} of ${capacity} jobs off the expected trail "${EXPECTED_TRAIL}"` +
            (offTrail.length === 0 ? "" : `; job ${offTrail[0]![0]}: "${describeTrail(offTrail[0]![1])}"`),
        );
        verdict.check(leftRunning === 0, `${leftRunning} rows left running under A's id after it exited`);
        verdict.check(
          exitMs <= exitBound && exit?.code === 0,
          `SIGTERM: exit ${exit === undefined ? "none (still running)" : (exit.code ?? exit.signal)} after ${exitMs} ms, bound ${exitBound} ms`,
        );
        verdict.check(
          report?.totals.released === capacity && report.totals.claimed === capacity,
          `A reported ${report?.totals.released ?? "no"} released of ${report?.totals.claimed ?? "no"} claimed, expected ${capacity} of ${capacity}`,
        );
        verdict.check(overlaps.overlaps === 0, `${overlaps.overlaps} times a job's handler started while an earlier run of it was still running`);
        verdict.note(
          `${capacity} claimed (${p.concurrency} running, ${p.prefetch} buffered): buffered back in the queue ${span(bufferedBackMs)} ms after SIGTERM ` +
            `(bound ${CLAIMABLE_WITHIN_MS} ms), started by B ${span(pickedUpMs)} ms after it; running given back after ${span(runningBackMs)} ms ` +
            `(shutdown timeout ${p.shutdownTimeoutMs} ms)`,
        );
        verdict.note(
          `${capacity - offTrail.length - missingTrails}/${capacity} given back unspent and run by B on attempt 2 of ${MAX_ATTEMPTS + 1}, no failure recorded; ` +
            `exit after ${(exitMs / 1_000).toFixed(1)} s (bound ${(exitBound / 1_000).toFixed(1)} s)`,
        );
        return {
          jobs: capacity,
          faults: "1 × SIGTERM",
          lost: invariants.lost,
          duplicates: invariants.duplicateTerminals + invariants.runsAfterFinish + overlaps.overlaps,
          reExecutions: invariants.reExecutions,
          verdict,
        };
      } finally {
        await Promise.all([first.abort(), second.abort()]);
      }
    });
  },
};

/** Jobs running under `workerId`, and how many handlers it has started (the oracle). */
async function holding(database: ChaosDatabase, workerId: string): Promise<{ readonly running: number; readonly started: number }> {
  return figures(
    database.db,
    sql<{ running: number; started: number }>`
    SELECT (SELECT count(*) FROM ${sql.id(database.schema, "all_jobs")} WHERE state = 'running' AND locked_by = ${workerId}) AS running,
           (SELECT count(*) FROM ${sql.id(database.schema, "chaos_executions")} WHERE worker_id = ${workerId}) AS started`,
  );
}

/** Jobs that succeeded. */
async function succeeded(database: ChaosDatabase): Promise<number> {
  const { n } = await figures(database.db, sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.id(database.schema, "all_jobs")} WHERE state = 'succeeded'`);
  return n;
}

/** Every handler run from the oracle: whose, when it started after `since` (both on the database's clock), how it ended. */
async function handlerRuns(
  database: ChaosDatabase,
  since: number,
): Promise<readonly { readonly jobId: string; readonly workerId: string; readonly startedAfterMs: number; readonly endedHow: string | null }[]> {
  const { rows } = await sql<{ job_id: string; worker_id: string; started_ms: string; ended_how: string | null }>`
    SELECT job_id::text, worker_id, extract(epoch FROM started_at) * 1000 AS started_ms, ended_how
      FROM ${sql.id(database.schema, "chaos_executions")}`.execute(database.db);
  return rows.map((row) => ({ jobId: row.job_id, workerId: row.worker_id, startedAfterMs: Number(row.started_ms) - since, endedHow: row.ended_how }));
}

/**
 * Whether a job's trail reads as {@link EXPECTED_TRAIL}: those steps, each
 * due at once, with no failure recorded and a lease exactly while running.
 */
function onTrail(steps: readonly TrailStep[]): boolean {
  return describeTrail(steps) === EXPECTED_TRAIL;
}

/** `min–max` of some ms figures, rounded. */
function span(values: readonly number[]): string {
  if (values.length === 0) return "none";
  return `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}`;
}
