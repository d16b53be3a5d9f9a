#!/usr/bin/env node
// Scale benchmark of the dashboard (not a test): seeds 1,000,000 jobs in a schema of its own,
// measures the server time of the overview and of job lists, prints EXPLAIN ANALYZE of each
// list query, and drops the schema.
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node packages/dashboard/bench/scale.mjs
//
// JOBS=200000 seeds fewer; REPEAT=15 sets the requests measured per row (the median is printed);
// KEEP=1 keeps the schema (its name is printed) for looking at plans by hand.
import "reflect-metadata";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const require = createRequire(import.meta.url);
const { createSilentLogger } = require("@stint/core");
const { createDatabase, migrate, dropSchema, PostgresJobStore } = require("@stint/postgres-driver");
const { browseJobsStatement } = require("../../postgres-driver/dist/src/queries/browse-jobs.js");
const { readRecentThroughputStatement } = require("../../postgres-driver/dist/src/queries/read-recent-throughput.js");
const { readQueueGaugesStatement } = require("../../postgres-driver/dist/src/queries/read-queue-gauges.js");
const { createDashboard } = require("../dist/src/index.js");
const { sql } = require("kysely");

const JOBS = Number(process.env.JOBS ?? 1_000_000);
const REPEAT = Number(process.env.REPEAT ?? 15);
const QUEUES = ["send-invoice", "charge-card", "generate-report", "resize-image", "sync-crm", "send-sms", "index-document", "call-partner-api"];
const ERRORS = [
  "Error: gateway timeout after 30000 ms",
  "PaymentError: card declined",
  "Error: SMTP 451 try again later",
  "TypeError: cannot read properties of undefined",
];
const TOKEN = "bench-token-0123456789abcdef";

const connectionString = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const schema = `stint_bench_dash_${randomBytes(4).toString("hex")}`;
const database = createDatabase({ connectionString, maxConnections: 6, statementTimeoutMs: 600_000, applicationName: schema });
const { db } = database;
const jobs = sql.id(schema, "jobs");

try {
  await migrate(db, { schema });
  await seed();
  const server = await serve();
  try {
    const rows = await measure(server);
    printTable(rows);
    await explainAll();
  } finally {
    server.close();
  }
} finally {
  if (process.env.KEEP === "1") console.log(`\nKept schema ${schema}.`);
  else await dropSchema(db, schema);
  await database.close();
}

async function seed() {
  const store = new PostgresJobStore({ db, schema });
  const started = performance.now();
  const batch = 5_000;
  for (let done = 0; done < JOBS; done += batch) {
    const count = Math.min(batch, JOBS - done);
    await store.enqueueMany(
      Array.from({ length: count }, (_, i) => {
        const n = done + i;
        return {
          queue: QUEUES[n % QUEUES.length],
          payloadJson: JSON.stringify({ n, to: `customer-${n % 9973}@example.com` }),
          priority: 0,
          maxAttempts: 5,
          timeoutMs: null,
          runAt: null,
          delayMs: 0,
          dedupeKey: null,
        };
      }),
    );
  }
  const inserted = performance.now();
  // Spread the jobs over the last 24 hours by id, as a day of a busy system with retention looks:
  // the history is 94 % succeeded, 4 % dead (kept for inspection), 2 % cancelled; the newest 2 %
  // (the last half hour) hold the waiting work, a third each queued (due), failed (retry
  // scheduled) and succeeded; the newest 0.1 % are running.
  const { rows } = await sql`SELECT min(id) AS lo, max(id) AS hi FROM ${jobs}`.execute(db);
  const lo = Number(rows[0].lo);
  const hi = Number(rows[0].hi);
  for (let from = lo; from <= hi; from += 50_000) {
    await sql`UPDATE ${jobs} SET
        created_at = c.t, run_at = c.t, updated_at = c.t + interval '1 second',
        state = c.state,
        attempts = CASE WHEN c.state = 'queued' THEN 0 ELSE 1 END,
        started_at = CASE WHEN c.state = 'queued' THEN NULL ELSE c.t + interval '100 ms' END,
        finished_at = CASE WHEN c.state IN ('succeeded', 'dead', 'cancelled') THEN c.t + interval '600 ms' END,
        duration_ms = CASE WHEN c.state IN ('succeeded', 'dead') THEN 500 END,
        locked_by = CASE WHEN c.state = 'running' THEN 'bench-worker' END,
        locked_until = CASE WHEN c.state = 'running' THEN now() + interval '1 hour' END,
        last_error = CASE WHEN c.state IN ('dead', 'failed') THEN (${ERRORS}::text[])[1 + (c.id % 4)] || E'\n    at work (worker.js:12:5)' END,
        error_code = CASE WHEN c.state = 'dead' THEN 'STINT_PERMANENT' END,
        result = CASE WHEN c.state = 'succeeded' THEN '{"ok":true}'::jsonb END
      FROM (SELECT id,
                   now() - interval '24 hours' + (id - ${lo}) * (interval '24 hours' / ${hi - lo + 1}) AS t,
                   CASE WHEN id - ${lo} >= ${0.999 * (hi - lo + 1)} THEN 'running'
                        WHEN id - ${lo} >= ${0.98 * (hi - lo + 1)} THEN (ARRAY['queued', 'failed', 'succeeded'])[1 + id % 3]
                        WHEN id % 100 < 94 THEN 'succeeded' WHEN id % 100 < 98 THEN 'dead' ELSE 'cancelled' END AS state
              FROM ${jobs} WHERE id >= ${from} AND id < ${from + 50_000}) AS c
     WHERE ${jobs}.id = c.id`.execute(db);
  }
  const updated = performance.now();
  await sql`VACUUM (ANALYZE) ${jobs}`.execute(db);
  const { rows: size } = await sql`SELECT pg_size_pretty(pg_total_relation_size(${`${schema}.jobs`}::regclass)) AS size`.execute(db);
  console.log(
    `Seeded ${JOBS.toLocaleString("en-US")} jobs in ${QUEUES.length} queues: enqueueMany ${((inserted - started) / 1000).toFixed(1)} s, ` +
      `states and times ${((updated - inserted) / 1000).toFixed(1)} s, VACUUM ANALYZE ${((performance.now() - updated) / 1000).toFixed(1)} s; jobs table ${size[0].size}.`,
  );
}

/** The dashboard on a free port, timing each request from its arrival to the end of its response. */
async function serve() {
  const dashboard = createDashboard({ db, schema, auth: { token: TOKEN }, log: createSilentLogger() });
  const timings = [];
  const server = createServer((request, response) => {
    const start = performance.now();
    response.on("finish", () => timings.push(performance.now() - start));
    dashboard(request, response);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.timings = timings;
  server.base = `http://127.0.0.1:${server.address().port}`;
  return server;
}

async function measure(server) {
  const { rows } = await sql`SELECT id FROM ${jobs} WHERE state = 'dead' ORDER BY id DESC LIMIT 1`.execute(db);
  const deadId = String(rows[0].id);
  const middle = String(Math.floor(JOBS / 2));
  const requests = [
    ["overview (page)", "/"],
    ["overview (refresh fragment)", "/fragments/overview"],
    ["jobs, all states", "/jobs"],
    ["jobs, dead", "/jobs?state=dead"],
    ["jobs, dead, page at id 500,000", `/jobs?state=dead&before=${middle}`],
    ["jobs, queued of one queue", "/jobs?queue=send-invoice&state=queued"],
    ['jobs, dead of one queue, error contains "timeout"', "/jobs?queue=charge-card&state=dead&q=timeout"],
    ["jobs, one queue (searched)", "/jobs?queue=sync-crm"],
    ["jobs, created within an hour 12 h ago", `/jobs?from=${iso(-12 * 3600)}&to=${iso(-11 * 3600)}`],
    ["job page", `/jobs/${deadId}`],
  ];
  const results = [];
  for (const [name, path] of requests) {
    const times = [];
    for (let i = 0; i < REPEAT + 2; i += 1) {
      const response = await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      await response.text();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      const took = server.timings.at(-1);
      if (i >= 2) times.push(took);
    }
    times.sort((a, b) => a - b);
    results.push({ name, median: times[Math.floor(times.length / 2)], max: times.at(-1) });
  }
  return results;
}

function iso(offsetSeconds) {
  return new Date(Date.now() + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function printTable(rows) {
  const width = Math.max(...rows.map((row) => row.name.length));
  console.log(`\nServer time per request, median of ${REPEAT} (after 2 warm-ups), on ${JOBS.toLocaleString("en-US")} jobs:\n`);
  console.log(`| ${"request".padEnd(width)} | median ms | max ms |`);
  console.log(`| ${"-".repeat(width)} | ---: | ---: |`);
  for (const row of rows) console.log(`| ${row.name.padEnd(width)} | ${row.median.toFixed(1).padStart(9)} | ${row.max.toFixed(1).padStart(6)} |`);
}

async function explainAll() {
  const statements = [
    ["overview: gauges", readQueueGaugesStatement(schema, {})],
    ["overview: throughput estimate", readRecentThroughputStatement(schema, { windowMs: 3_600_000, buckets: 12, scanLimit: 50_000 }, 300_000)],
    ["jobs, dead", browseJobsStatement(schema, { states: ["dead"], limit: 50, scanLimit: 5_000 }).query],
    [
      "jobs, dead, page at id 500,000",
      browseJobsStatement(schema, { states: ["dead"], beforeId: String(Math.floor(JOBS / 2)), limit: 50, scanLimit: 5_000 }).query,
    ],
    ["jobs, queued of one queue", browseJobsStatement(schema, { queue: "send-invoice", states: ["queued"], limit: 50, scanLimit: 5_000 }).query],
    [
      "jobs, dead of one queue, error contains timeout",
      browseJobsStatement(schema, { queue: "charge-card", states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 5_000 }).query,
    ],
    ["jobs, all states", browseJobsStatement(schema, { limit: 50, scanLimit: 5_000 }).query],
  ];
  for (const [name, statement] of statements) {
    // As PostgresJobBrowser runs them: in a transaction of their own with enable_seqscan off.
    const { rows } = await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      return sql`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${statement}`.execute(trx);
    });
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    const scans = [...new Set(plan.match(/(?:Index Only Scan|Index Scan Backward|Index Scan|Bitmap Index Scan|Seq Scan)(?: using \w+)? on \w+/g) ?? [])];
    console.log(`\n== EXPLAIN ${name}: ${scans.join("; ")}${/Seq Scan on jobs/.test(plan) ? "  <-- SEQ SCAN" : ""}\n${plan}`);
  }
}
