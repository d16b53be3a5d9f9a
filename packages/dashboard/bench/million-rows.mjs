// Page timings of the dashboard at 1,000,000 finished + 10,000 waiting jobs (a benchmark, not a test).
// Usage: DATABASE_URL=… node packages/dashboard/bench/million-rows.mjs <checkout> <schema> [--seed]
// <checkout>: a built checkout of the repository (this one, or an older one in a git worktree, to compare);
// <schema>: where to seed (--seed drops and recreates it with that checkout's migrations) and read.
// Prints, per page, the median and largest of 7 requests in ms (and the largest but the first), the jobs shown, how many of the
// 3 rare dead jobs (ids 100000, 200000, 300000) are among them, and the page's summary line.
import { createRequire } from "node:module";
import { createServer } from "node:http";
import path from "node:path";

const [tree, schema, flag] = process.argv.slice(2);
const require = createRequire(path.join(tree, "packages/dashboard/package.json"));
const { Kysely, PostgresDialect, sql } = require("kysely");
const pg = require("pg");
const driver = require(path.join(tree, "packages/postgres-driver"));
const { createDashboard } = require(path.join(tree, "packages/dashboard"));
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 8 }) }) });

const FINISHED = 1_000_000;
const WAITING = 10_000;
const SPACING_MS = 72; // 1M over 20 hours: about 50,000 succeed per hour

if (flag === "--seed") {
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
  await driver.migrate(db, { schema });
  const t0 = Date.now();
  await sql`SELECT ${sql.id(schema, "ensure_history_partitions")}((now() AT TIME ZONE 'UTC')::date - 2, (now() AT TIME ZONE 'UTC')::date + 1)`.execute(db);
  await sql`INSERT INTO ${sql.id(schema, "finished_jobs")} (id, queue, payload, state, attempts, created_at, run_at, updated_at, finished_at, last_error)
SELECT g, CASE WHEN g IN (100000, 200000, 300000) THEN 'rare' ELSE 'queue-' || (g % 20) END, '{"n":1}'::jsonb,
       CASE WHEN g IN (100000, 200000, 300000) OR g % 97 = 0 THEN 'dead' WHEN g % 201 = 0 THEN 'cancelled' ELSE 'succeeded' END,
       1, t - interval '50 milliseconds', t - interval '50 milliseconds', t, t,
       CASE WHEN g IN (100000, 200000, 300000) THEN 'Error: rare gateway meltdown'
            WHEN g % 97 = 0 THEN 'Error: timeout after 30 s'
            WHEN g % 20 = 0 THEN 'Error: connection reset, retried' END
  FROM generate_series(1, ${FINISHED}::integer) AS g,
       LATERAL (SELECT now() - (${FINISHED}::integer - g) * ${SPACING_MS}::integer * interval '1 millisecond' AS t) AS at`.execute(db);
  await sql`INSERT INTO ${sql.id(schema, "jobs")} (id, queue, payload, state, created_at, run_at, updated_at)
SELECT ${FINISHED}::integer + g, CASE WHEN g <= 1125 THEN 'queue-5' ELSE 'queue-' || (g % 4) END, '{"n":1}'::jsonb, 'queued',
       now() - (${WAITING}::integer - g) * interval '1 millisecond', now(), now()
  FROM generate_series(1, ${WAITING}::integer) AS g`.execute(db);
  await sql`SELECT setval(${`${schema}.jobs_id_seq`}::regclass, ${FINISHED + WAITING + 1}::bigint)`.execute(db);
  await sql`VACUUM ANALYZE ${sql.id(schema, "finished_jobs")}`.execute(db);
  await sql`VACUUM ANALYZE ${sql.id(schema, "jobs")}`.execute(db);
  console.error(`seeded ${schema} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

const token = "bench-token-0123456789abcdef";
const dashboard = createDashboard({
  auth: { token },
  db,
  schema,
  log: {
    error() {},
    warn() {},
    info() {},
    debug() {},
    child() {
      return this;
    },
  },
});
const server = createServer(dashboard);
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const iso = (ms) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
const now = Date.now();
const pages = [
  ["overview", "/"],
  ["overview refresh (fragment)", "/fragments/overview"],
  ["jobs, no filter", "/jobs"],
  ["state=dead", "/jobs?state=dead"],
  ["queue=rare", "/jobs?queue=rare"],
  ["queue=rare&state=dead", "/jobs?queue=rare&state=dead"],
  ["queue=queue-5&state=queued", "/jobs?queue=queue-5&state=queued"],
  ["q=meltdown (error text)", "/jobs?q=meltdown"],
  ["created 12 h to 11 h ago", `/jobs?from=${iso(now - 12 * 3_600_000)}&to=${iso(now - 11 * 3_600_000)}`],
  ["succeeded, page at id 500,000", "/jobs?state=succeeded&before=500000"],
];
// A tab refreshing every 5 s finds the overview's throughput (kept 5 s) expired at each refresh: measured apart, 5.1 s between requests.
pages.splice(2, 0, ["overview refresh, 5.1 s apart", "/fragments/overview", 5_100]);
const rows = [];
for (const [name, target, pauseMs = 0] of pages) {
  const times = [];
  let body = "";
  for (let run = 0; run < 7; run += 1) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const started = performance.now();
    const response = await fetch(origin + target, { headers: { authorization: `Bearer ${token}` } });
    body = await response.text();
    times.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${target}: ${response.status} ${body.slice(0, 200)}`);
  }
  // The first request after the server starts opens the pool's connections and reads the throughput: shown apart.
  const afterFirst = Math.max(...times.slice(1));
  times.sort((a, b) => a - b);
  const shown = (body.match(/data-job-id="/g) ?? []).length;
  const rare = ["100000", "200000", "300000"].filter((id) => body.includes(`data-job-id="${id}"`)).length;
  const summary = (/<p class="summary"[^>]*>([\s\S]*?)<\/p>/.exec(body)?.[1] ?? "").replace(/<[^>]+>/g, "").trim();
  rows.push({ name, median: times[3].toFixed(0), max: times[6].toFixed(0), maxAfterFirst: afterFirst.toFixed(0), shown, rare, summary });
}
// The throughput read itself, uncached (the overview reuses it for 5 s in the new build).
const browser = new driver.PostgresJobBrowser({ db, schema });
const times = [];
for (let run = 0; run < 7; run += 1) {
  const started = performance.now();
  await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 12, scanLimit: 50_000 });
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
rows.push({ name: "throughput read, uncached", median: times[3].toFixed(0), max: times[6].toFixed(0), shown: 0, rare: 0, summary: "" });
console.log(JSON.stringify(rows, null, 1));
server.close();
await db.destroy();
process.exit(0);
