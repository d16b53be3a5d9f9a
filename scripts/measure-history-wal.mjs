#!/usr/bin/env node
// Measures the WAL bytes per job of completing jobs with and without also
// inserting an attempt-history row in the same statement: the figure behind
// recording the successful attempt on the job row only (migration 5).
//
//   npm run build && DATABASE_URL=postgres://… node scripts/measure-history-wal.mjs [jobs] [rounds]
//
// WAL positions are server-wide: other sessions' writes add to a round, so
// each variant runs several rounds, interleaved, and the smallest counts.
import "reflect-metadata";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { sql } = require("kysely");
const { createTestSchema } = require("../packages/postgres-driver/dist/src/testing/index.js");

const JOBS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const BATCH = 500;

async function measure(withHistory) {
  const test = await createTestSchema({ prefix: "stint_wal", maxConnections: 2 });
  try {
    const jobs = sql.id(test.schema, "jobs");
    const history = sql.id(test.schema, "job_attempts");
    await sql`INSERT INTO ${jobs} (queue, payload) SELECT 'wal', jsonb_build_object('n', n) FROM generate_series(1, ${JOBS}::integer) AS n`.execute(test.db);
    await sql`UPDATE ${jobs} SET state = 'running', locked_by = 'w', locked_until = now() + interval '1 hour', attempts = 1, started_at = now()`.execute(
      test.db,
    );
    await sql`CHECKPOINT`.execute(test.db).catch(() => undefined);
    const { rows: ids } = await sql`SELECT id FROM ${jobs} ORDER BY id`.execute(test.db);
    const insert = withHistory
      ? sql`, recorded AS (INSERT INTO ${history} (job_id, attempt, outcome, worker_id, started_at, finished_at, duration_ms)
             SELECT id, attempts, 'failed', locked_by, started_at, now(), duration_ms FROM done)`
      : sql``;
    const before = (await sql`SELECT pg_current_wal_insert_lsn() AS lsn`.execute(test.db)).rows[0].lsn;
    for (let start = 0; start < ids.length; start += BATCH) {
      const batch = ids.slice(start, start + BATCH).map((row) => String(row.id));
      await sql`WITH done AS (
  UPDATE ${jobs} SET state = 'succeeded', duration_ms = 1, finished_at = now(), locked_until = NULL, updated_at = now()
   WHERE id = ANY(${batch}::bigint[]) AND locked_by = 'w' AND state = 'running'
  RETURNING id, attempts, locked_by, started_at, duration_ms)${insert}
SELECT count(*) FROM done`.execute(test.db);
    }
    const { rows } = await sql`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${before}::pg_lsn)::float8 AS bytes`.execute(test.db);
    return rows[0].bytes / JOBS;
  } finally {
    await test.drop();
  }
}

const results = { without: [], with: [] };
for (let round = 0; round < ROUNDS; round += 1) {
  results.without.push(await measure(false));
  results.with.push(await measure(true));
}
const without = Math.min(...results.without);
const withHistory = Math.min(...results.with);
console.log(`completing ${JOBS} jobs in batches of ${BATCH}, best of ${ROUNDS} rounds:`);
console.log(`  job row only:                 ${without.toFixed(0)} bytes of WAL per job`);
console.log(`  job row + history row:        ${withHistory.toFixed(0)} bytes of WAL per job (+${(((withHistory - without) / without) * 100).toFixed(0)}%)`);
console.log(`  rounds: without ${results.without.map((b) => b.toFixed(0)).join(", ")}; with ${results.with.map((b) => b.toFixed(0)).join(", ")}`);
