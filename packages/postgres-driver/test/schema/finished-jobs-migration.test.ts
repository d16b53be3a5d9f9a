import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { createSilentLogger, runWorkers, type RunReport } from "@stint/core";
import { eventually, newJob } from "@stint/core/testing";
import { sql } from "kysely";
import { createDatabase, dropSchema, migrate, MIGRATIONS, PostgresJobStore, type DatabaseHandle } from "../../src";
import type { HistoryProgress } from "../../src/schema/move-history";
import { ScriptedWorker, TaskJob } from "../worker-lifecycle/scripted-worker";
import { migrateTo } from "./migrate-to";

const connectionString = process.env["DATABASE_URL"] ?? "";

/** Finished rows an installation kept before version 15, finished over the last four days. */
const HISTORY = 1_000_000;
/** Jobs queued when the upgrade starts. */
const BACKLOG = 20_000;
/** Jobs enqueued every tick while the history moves, so the drain runs for as long as the move does. */
const PRODUCED_PER_TICK = 200;
const TICK_MS = 100;
/** The queue of the drain, and of nine in ten finished rows (the costly case: history of the very queue being drained). */
const QUEUE = TaskJob.name;

describe("migration 15 (finished-jobs) on an installation with history", () => {
  let admin: DatabaseHandle;
  let workers: DatabaseHandle;
  const schema = `stint_history_${randomBytes(5).toString("hex")}`;

  before(() => {
    admin = createDatabase({ connectionString, maxConnections: 4, statementTimeoutMs: 120_000 });
    workers = createDatabase({ connectionString, maxConnections: 14 });
  });
  after(async () => {
    await dropSchema(admin.db, schema);
    await workers.close();
    await admin.close();
  });

  it("moves 1,000,000 finished rows to their day partitions while workers drain, resumably, losing none and running no job twice", async function () {
    this.timeout(180_000);
    const { db } = admin;
    const jobs = sql.id(schema, "jobs");
    const finished = sql.id(schema, "finished_jobs");
    await migrateTo(db, schema, 14);
    await sql`INSERT INTO ${jobs} (queue, payload, state, attempts, max_attempts, locked_by, created_at, run_at, started_at, finished_at,
                                   updated_at, duration_ms, result, last_error, error_code)
      SELECT CASE WHEN n % 10 = 0 THEN 'reports' ELSE ${QUEUE} END, jsonb_build_object('n', -n),
             CASE n % 50 WHEN 0 THEN 'dead' WHEN 1 THEN 'cancelled' ELSE 'succeeded' END, 1, 3, 'old-worker',
             done - interval '1 second', done - interval '1 second', done - interval '5 milliseconds', done, done, 5,
             CASE WHEN n % 50 > 1 THEN '{"ok":true}'::jsonb END, CASE WHEN n % 50 = 0 THEN 'boom' END, CASE WHEN n % 50 = 0 THEN 'E_BOOM' END
        FROM generate_series(1, ${HISTORY}::integer) AS n,
             LATERAL (SELECT now() - interval '4 days' + n * (interval '4 days' / ${HISTORY}::integer)) AS finishing(done)`.execute(db);
    await sql`INSERT INTO ${jobs} (queue, payload, max_attempts) SELECT ${QUEUE}, jsonb_build_object('n', n), 3
        FROM generate_series(1, ${BACKLOG}::integer) AS n`.execute(db);
    await sql`ANALYZE ${jobs}`.execute(db);
    const legacyFingerprint = sql<{
      rows: string;
      fingerprint: string;
    }>`SELECT count(*) AS rows, sum(hashtext((to_jsonb(legacy) - 'start_by' - 'follows' - 'group_key' - 'serial' - 'workflow_id' - 'step' - 'waiting_on')::text)::bigint) AS fingerprint`;
    const { rows: legacyBefore } = await sql<{ rows: string; fingerprint: string; last_id: string }>`${legacyFingerprint}, max(id) AS last_id
      FROM ${jobs} AS legacy WHERE state IN ('succeeded', 'dead', 'cancelled')`.execute(db);
    expect(legacyBefore[0]?.rows).to.equal(String(HISTORY));
    const lastLegacyId = legacyBefore[0]!.last_id;

    // The schema step first, as a deployment runs it: this version's workers need finished_jobs.
    const schemaStep = await migrate(db, { schema, moveHistory: false });
    expect(schemaStep).to.deep.include({
      applied: MIGRATIONS.filter((m) => m.version >= 15).map((m) => m.version),
      version: MIGRATIONS.length,
      movedFinishedJobs: 0,
      interrupted: false,
    });

    const runs = new Map<string, number>();
    const store = new PostgresJobStore({ db: workers.db, statements: workers.statements, schema });
    const worker = new ScriptedWorker(
      store,
      {
        process: async (_item, ctx) => {
          runs.set(ctx.job.id, (runs.get(ctx.job.id) ?? 0) + 1);
        },
      },
      { concurrency: 10 },
    );
    const stopWorkers = new AbortController();
    const drain: Promise<RunReport> = runWorkers({
      workers: [worker],
      mode: "loop",
      store,
      log: createSilentLogger(),
      signal: stopWorkers.signal,
      pollIntervalMs: 50,
    });
    let produced = 0;
    const enqueues: Promise<unknown>[] = [];
    const producing = setInterval(() => {
      const batch = Array.from({ length: PRODUCED_PER_TICK }, () => newJob(QUEUE, { n: BACKLOG + (produced += 1) }, { maxAttempts: 3 }));
      enqueues.push(store.enqueueMany(batch));
    }, TICK_MS);

    let interruptedRun;
    let resumedRun;
    const progress: HistoryProgress[] = [];
    try {
      // Stopped after three batches of 5,000, as an operator's ^C would stop it; the rows it moved stay moved.
      const stop = new AbortController();
      interruptedRun = await migrate(db, {
        schema,
        onHistoryProgress: ({ moved }) => {
          if (moved >= 15_000) stop.abort();
        },
        signal: stop.signal,
      });
      const drainedBefore = runs.size;
      resumedRun = await migrate(db, { schema, onHistoryProgress: (reached) => progress.push(reached) });
      expect(runs.size, "the workers drained while the history moved").to.be.greaterThan(drainedBefore);
    } finally {
      clearInterval(producing);
      await Promise.all(enqueues);
    }

    expect(interruptedRun).to.deep.include({ applied: [], movedFinishedJobs: 15_000, interrupted: true });
    expect(resumedRun).to.deep.include({ applied: [], movedFinishedJobs: HISTORY - 15_000, interrupted: false });
    expect(progress[0]).to.deep.equal({ moved: 0, total: HISTORY - 15_000 });
    expect(progress.at(-1)).to.deep.equal({ moved: HISTORY - 15_000, total: HISTORY - 15_000 });
    expect(progress.length, "a report per batch of 5,000").to.be.at.least((HISTORY - 15_000) / 5_000);

    // Every job of the drain runs once, then stop the workers.
    const enqueued = BACKLOG + produced;
    await eventually(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${finished} WHERE id > ${lastLegacyId}::bigint`.execute(db);
        return rows[0]!.n === enqueued;
      },
      { timeoutMs: 60_000, what: `the ${enqueued} jobs of the drain to succeed` },
    );
    stopWorkers.abort();
    const report = await drain;
    expect(report.exitCode).to.equal(0);
    expect(report.totals).to.include({ claimed: enqueued, succeeded: enqueued, leaseLost: 0, retried: 0, dead: 0, writeFailed: 0 });
    expect(runs.size).to.equal(enqueued);
    expect([...runs.values()].every((count) => count === 1)).to.equal(true);
    const ranAgain = [...runs.keys()].filter((id) => BigInt(id) <= BigInt(lastLegacyId));
    expect(ranAgain, "finished rows that ran again").to.deep.equal([]);

    // No finished row lost or changed, and none left in jobs; all in day partitions.
    const { rows: legacyAfter } = await sql<{ rows: string; fingerprint: string }>`${legacyFingerprint}
      FROM ${finished} AS legacy WHERE id <= ${lastLegacyId}::bigint`.execute(db);
    expect(legacyAfter[0]).to.deep.equal({ rows: legacyBefore[0]!.rows, fingerprint: legacyBefore[0]!.fingerprint });
    const { rows: left } = await sql<{ state: string; n: number }>`SELECT state, count(*)::int AS n FROM ${jobs} GROUP BY state`.execute(db);
    expect(left).to.deep.equal([]);
    const { rows: all } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(schema, "all_jobs")}`.execute(db);
    expect(all[0]?.n, "every job of before and of the drain, once").to.equal(HISTORY + enqueued);
    const { rows: places } = await sql<{ kept: number; days: number }>`
      SELECT count(*) FILTER (WHERE tableoid = ${`"${schema}".finished_jobs_kept`}::regclass)::int AS kept,
        count(DISTINCT tableoid)::int AS days FROM ${finished} WHERE id <= ${lastLegacyId}::bigint`.execute(db);
    expect(places[0]).to.deep.equal({ kept: 0, days: 5 });
  });
});
