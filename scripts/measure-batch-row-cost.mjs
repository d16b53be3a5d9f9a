#!/usr/bin/env node
// What PostgreSQL spends on one job of a batch worker, claim and completion
// together, with the store's own statements and with the alternatives
// weighed for batch workers (docs/benchmarks.md, "Batch handlers beside W3:
// the database's share and the worker's"). Each variant claims every job of
// a queue of `jobs` no-op jobs and completes them, one claim and one
// completion at a time on one connection, after a CHECKPOINT (so full-page
// images count, as in a drain):
//
//   as shipped            store.claimBatch (limit `batch`) + store.completeJobs
//   claims only           store.claimBatch alone: the claim's share of the above
//   claims of 3×batch     as shipped, with three times the limit
//   without lease index   as shipped, on a schema whose jobs_lease_idx is dropped
//   lock held, no claim   a transaction that locks the jobs (FOR UPDATE SKIP
//                         LOCKED) and moves them to finished_jobs: no claim
//                         update at all, the lower bound of a batch that holds
//                         its jobs by a lock instead of a lease
//
//   npm run build && DATABASE_URL=postgres://… node scripts/measure-batch-row-cost.mjs [jobs] [batch] [rounds]
//
// The server's CPU is read from /proc for the schema's own backends, so it is
// reported only when the server runs on this machine; WAL positions are
// server-wide, so a round shares them with whatever else writes meanwhile.
// Rounds alternate the variants; the median of each is printed.
import "reflect-metadata";
import fs from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { sql } = require("kysely");
const { createTestSchema } = require("../packages/postgres-driver/dist/src/testing/index.js");

const JOBS = Number(process.argv[2] ?? 50_000);
const BATCH = Number(process.argv[3] ?? 1_000);
const ROUNDS = Number(process.argv[4] ?? 3);
const QUEUE = "row-cost";
const WORKER = "row-cost-worker";
const TICK_US = 10_000; // /proc/<pid>/stat counts CPU in ticks of 10 ms (CLK_TCK 100)

/** CPU ticks of the backends whose application_name is the schema's, or null when they cannot be read here. */
async function backendTicks(test) {
  const { rows } = await sql`SELECT pid FROM pg_stat_activity WHERE application_name = ${test.applicationName}`.execute(test.db);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return ticks;
}

async function walLsn(test) {
  return (await sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`.execute(test.db)).rows[0].lsn;
}

/** One claim and (unless `claimOnly`) its completion through the store, as a worker whose handlers all succeed sends them. */
function throughStore(limit, claimOnly = false) {
  return async (test) => {
    const claimed = await test.store.claimBatch({ queue: QUEUE, workerId: WORKER, limit, leaseMs: 60_000, takeOverExpired: false });
    if (claimed.length === 0 || claimOnly) return claimed.length;
    await test.store.completeJobs({
      workerId: WORKER,
      jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })),
    });
    return claimed.length;
  };
}

/** The job columns of finished_jobs in table order, each as the value a job finished now by a lock-held batch gets. */
async function movedColumns(test) {
  const { rows } = await sql`SELECT column_name FROM information_schema.columns
    WHERE table_schema = ${test.schema} AND table_name = 'finished_jobs' ORDER BY ordinal_position`.execute(test.db);
  const values = {
    state: sql`'succeeded'`,
    attempts: sql`done.attempts + 1`,
    locked_by: sql`${WORKER}::text`,
    locked_until: sql`NULL`,
    started_at: sql`now()`,
    finished_at: sql`now()`,
    updated_at: sql`now()`,
    duration_ms: sql`1`,
  };
  const names = rows.map((row) => row.column_name);
  return { names: sql.join(names.map((name) => sql.id(name))), values: sql.join(names.map((name) => values[name] ?? sql.ref(`done.${name}`))) };
}

/** Locks up to `limit` due jobs in a transaction and moves them to finished_jobs in the same transaction. */
function lockHeld(limit) {
  let columns;
  return async (test) => {
    columns ??= await movedColumns(test);
    const jobs = sql.id(test.schema, "jobs");
    return test.db.transaction().execute(async (trx) => {
      const { rows } = await sql`SELECT id, queue, payload, meta, attempts, max_attempts, priority, timeout_ms FROM ${jobs}
        WHERE queue = ${QUEUE} AND group_key = '' AND state IN ('queued', 'failed') AND run_at <= now()
        ORDER BY priority DESC, run_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED`.execute(trx);
      if (rows.length === 0) return 0;
      await sql`WITH done AS (DELETE FROM ${jobs} AS jobs WHERE id = ANY(${rows.map((row) => row.id)}::bigint[]) RETURNING jobs.*)
        INSERT INTO ${sql.id(test.schema, "finished_jobs")} (${columns.names}) SELECT ${columns.values} FROM done`.execute(trx);
      return rows.length;
    });
  };
}

const VARIANTS = [
  { name: "as shipped", step: throughStore(BATCH) },
  { name: "claims only", step: throughStore(BATCH, true) },
  { name: `claims of ${3 * BATCH}`, step: throughStore(3 * BATCH) },
  { name: "without lease index", step: throughStore(BATCH), prepare: (test) => sql`DROP INDEX ${sql.id(test.schema, "jobs_lease_idx")}`.execute(test.db) },
  { name: "lock held, no claim", step: lockHeld(BATCH) },
];

async function measure(variant, jobCount = JOBS) {
  // One connection: every statement of the variant runs on the one backend whose CPU is read.
  const test = await createTestSchema({ prefix: "stint_rowcost", maxConnections: 1 });
  try {
    await variant.prepare?.(test);
    const jobs = sql.id(test.schema, "jobs");
    await sql`INSERT INTO ${jobs} (queue, payload) SELECT ${QUEUE}, jsonb_build_object('i', n) FROM generate_series(1, ${jobCount}::integer) AS n`.execute(
      test.db,
    );
    await sql`VACUUM ANALYZE ${jobs}`.execute(test.db);
    await sql`CHECKPOINT`.execute(test.db).catch(() => undefined);
    const walBefore = await walLsn(test);
    const ticksBefore = await backendTicks(test);
    const nodeBefore = process.cpuUsage();
    const started = performance.now();
    let done = 0;
    for (let got = await variant.step(test); got > 0; got = await variant.step(test)) done += got;
    const wallUs = ((performance.now() - started) * 1000) / done;
    const node = process.cpuUsage(nodeBefore);
    const ticksAfter = await backendTicks(test);
    const { rows } = await sql`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${walBefore}::pg_lsn)::float8 AS bytes`.execute(test.db);
    if (done !== jobCount) throw new Error(`${variant.name}: ${done} of ${jobCount} jobs finished`);
    return {
      wallUs,
      serverUs: ticksBefore === null || ticksAfter === null ? null : ((ticksAfter - ticksBefore) * TICK_US) / done,
      nodeUs: (node.user + node.system) / done,
      walBytes: rows[0].bytes / done,
    };
  } finally {
    await test.drop();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const results = new Map(VARIANTS.map((variant) => [variant.name, []]));
// One small untimed pass of every variant first: the first timed one would otherwise pay for compiling the code.
const warmJobs = Math.min(JOBS, 2 * BATCH);
for (const variant of VARIANTS) await measure(variant, warmJobs);
for (let round = 0; round < ROUNDS; round += 1) {
  const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
  for (const variant of order) results.get(variant.name).push(await measure(variant));
}
const show = (values, digits) =>
  values.some((value) => value === null) ? "–" : `${median(values).toFixed(digits)} (${values.map((value) => value.toFixed(digits)).join(", ")})`;
console.log(`${JOBS} jobs claimed and completed, claims of ${BATCH} unless said, ${ROUNDS} rounds alternating; per job, median (rounds):\n`);
console.log("| variant | PostgreSQL CPU, µs | node CPU, µs | wall, µs | WAL, bytes |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const [name, rounds] of results) {
  console.log(
    `| ${name} | ${show(
      rounds.map((r) => r.serverUs),
      1,
    )} | ${show(
      rounds.map((r) => r.nodeUs),
      1,
    )} | ${show(
      rounds.map((r) => r.wallUs),
      1,
    )} | ${median(rounds.map((r) => r.walBytes)).toFixed(0)} |`,
  );
}
