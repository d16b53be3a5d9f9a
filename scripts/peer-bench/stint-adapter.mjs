// The peer benchmark's stint adapter, kept with the code it measures
// (`STINT_ADAPTER=scripts/peer-bench/stint-adapter.mjs`). It drives stint as
// the README tells a user to: a job kind, an AbstractQueueWorker subclass
// built by the container, runFromContainer in loop mode.
//
// STINT_BENCH_OBSERVE=1 turns on everything an observed deployment runs:
// Prometheus metrics (their own registry) and a listener on every worker
// event. Attempt history and OpenTelemetry (a no-op without an SDK) are
// always on. STINT_BENCH_MAX_RUNNING=N caps the queue's running jobs at N
// across all workers (the claims then take the controlled path).
// STINT_BENCH_DURABLE_CLAIMS=1 makes every claim wait for its WAL flush
// (the worker option durableClaims).
// STINT_BENCH_BATCH=N gives the worker batchSize N and a processBatch that
// runs the benchmark's handler on every job of the batch at once (a job
// whose handler throws fails alone); concurrency then counts batches.
// STINT_BENCH_STORE_LOOP=1 replaces the worker with a bare loop over the
// store's own claim and completion statements (claims of 1,000, one
// completion statement in flight, no worker core: no leases kept, no
// heartbeat, no events): what the lease model's statements allow when the
// worker costs next to nothing. No-op drains only (W3, W4); a handler that
// throws ends the loop.
// STINT_BENCH_GROUPS=N gives the enqueued jobs N groups, round robin (the
// claims then take turns among the groups).
// STINT_BENCH_DATABASE_URL=postgres://… sends stint's own connections there
// instead (a PgBouncer in front of the benchmark's server, say), with
// nothing else set; the harness's schema drops and counts still go to the
// server itself. The variables reach the forked worker processes of W4.
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import path from "node:path";

const ROOT = process.env.STINT_ROOT ?? process.cwd();
const load = createRequire(path.join(ROOT, "package.json"));
load("reflect-metadata");
const core = load("@stint/core");
const { registerPostgresDriver, migrate } = load("@stint/postgres-driver");
const tsyringe = load("tsyringe");
const pg = load("pg");

const observe = process.env.STINT_BENCH_OBSERVE === "1";
const maxRunning = process.env.STINT_BENCH_MAX_RUNNING ? Number(process.env.STINT_BENCH_MAX_RUNNING) : null;
const durableClaims = process.env.STINT_BENCH_DURABLE_CLAIMS === "1";
const batchSize = process.env.STINT_BENCH_BATCH ? Number(process.env.STINT_BENCH_BATCH) : 1;
const storeLoop = process.env.STINT_BENCH_STORE_LOOP === "1";
const STORE_LOOP_CLAIM = 1_000;
const groups = process.env.STINT_BENCH_GROUPS ? Number(process.env.STINT_BENCH_GROUPS) : 0;
let enqueued = 0;
const groupOptions = () => (groups > 0 ? { options: { group: `g${enqueued++ % groups}` } } : {});
const schema = "peerbench_stint";
const stintUrl = (ctx) => process.env.STINT_BENCH_DATABASE_URL || ctx.pgUrl;
const logLevel = process.env.STINT_LOG_LEVEL ?? "error";
const backoff = { baseMs: 0, maxMs: 0, jitter: 0 };

export function create(ctx) {
  const Kind = core.defineJob(ctx.queue);
  let container;
  let driver;
  let client;
  let run;
  let countPool;
  let heard = 0;

  const dropSchema = async () => {
    const c = new pg.Client({ connectionString: ctx.pgUrl });
    await c.connect();
    try {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await c.end();
    }
  };

  return {
    describe() {
      return {
        package: "@stint/core + @stint/postgres-driver",
        version: execFileSync("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
        options: {
          worker: storeLoop
            ? `no worker: a loop of store.claimBatch (${STORE_LOOP_CLAIM}) and store.completeJobs`
            : `AbstractQueueWorker subclass, concurrency N, backoff ${JSON.stringify(backoff)}, prefetch auto${batchSize > 1 ? `, batchSize ${batchSize} (processBatch)` : ""}`,
          run: "runFromContainer(container, { queues, mode: 'loop', signal })",
          logger: `registerLogger level ${logLevel}`,
          observe: observe ? "metrics on (own registry) + a listener on every worker event" : "metrics off, no event listeners",
          maxRunning: maxRunning === null ? "no cap" : `queue capped at ${maxRunning} running`,
          connection: process.env.STINT_BENCH_DATABASE_URL ? `STINT_BENCH_DATABASE_URL ${process.env.STINT_BENCH_DATABASE_URL}` : "the benchmark's server",
        },
      };
    },

    async setup({ fresh }) {
      container = tsyringe.container.createChildContainer();
      core.registerLogger(container, { level: logLevel, format: "json" });
      driver = registerPostgresDriver(container, { connectionString: stintUrl(ctx), schema, onWarning: () => undefined });
      client = container.resolve(core.JobClient);
      if (fresh) {
        await dropSchema();
        await migrate(driver.db, { schema });
        if (maxRunning !== null) await driver.store.setQueueControls(ctx.queue, { maxRunning });
      }
    },

    enqueueOne: (payload) => client.enqueue(Kind, payload, groupOptions().options),
    enqueueBulk: (payloads) =>
      client.enqueueMany(
        Kind,
        payloads.map((payload) => ({ payload, ...groupOptions() })),
      ),

    async startWorkers(concurrency, handler) {
      if (storeLoop) {
        run = startStoreLoop(driver.store, ctx.queue, handler);
        return;
      }
      class BenchWorker extends core.AbstractQueueWorker {
        job = Kind;
        constructor(store, log) {
          super(store, log, { concurrency, backoff, durableClaims, ...(batchSize > 1 ? { batchSize } : {}) });
        }
        parse(payload) {
          return payload;
        }
        async processItem(item, jobCtx) {
          await handler(item, { attempt: jobCtx.job.attempt });
        }
        async processBatch(entries, batchCtx) {
          await Promise.all(
            entries.map((entry) =>
              handler(entry.item, { attempt: entry.job.attempt }).then(
                () => batchCtx.succeed(entry),
                (error) => batchCtx.fail(entry, error),
              ),
            ),
          );
        }
      }
      tsyringe.inject(core.JOB_STORE)(BenchWorker, undefined, 0);
      tsyringe.inject(core.LOGGER)(BenchWorker, undefined, 1);
      tsyringe.injectable()(BenchWorker);
      core.registerWorkers(container, [BenchWorker]);
      const controller = new AbortController();
      const watch = {};
      if (observe) {
        const events = new core.WorkerEvents();
        // The list of every event name is stint's own (not public API); the adapter listens as an app listening to all would.
        for (const name of load("@stint/core/internal").WORKER_EVENT_NAMES)
          events.on(name, () => {
            heard += 1;
          });
        Object.assign(watch, { events, metrics: {} });
      }
      const promise = core.runFromContainer(container, { queues: [ctx.queue], mode: "loop", signal: controller.signal, ...watch });
      promise.catch(() => {});
      run = { controller, promise };
    },

    async pending() {
      countPool ??= new pg.Pool({ connectionString: ctx.pgUrl, max: 1 });
      const { rows } = await countPool.query(`SELECT count(*)::int AS n FROM ${schema}.jobs WHERE queue = $1 AND state IN ('queued', 'running', 'failed')`, [
        ctx.queue,
      ]);
      return rows[0].n;
    },

    async stop() {
      if (run) {
        run.controller.abort();
        const report = await run.promise.catch((error) => ({ exitCode: -1, error: error.message }));
        if (report.exitCode !== 0) console.error(`[stint] run ended with exit code ${report.exitCode}`);
        if (observe && heard === 0 && report.exitCode === 0) console.error("[stint] observe on, but no event was heard");
        run = null;
      }
      if (driver) {
        await driver.close().catch(() => {});
        driver = null;
      }
      if (countPool) {
        await countPool.end().catch(() => {});
        countPool = null;
      }
      container = null;
    },

    teardown: dropSchema,
  };
}

/**
 * Claims and completes through the store alone until aborted: one claim at
 * a time, every job of it run at once, and one completion statement in
 * flight that takes every job done meanwhile. Resolves like a run's report.
 */
function startStoreLoop(store, queue, handler) {
  const controller = new AbortController();
  const workerId = `store-loop-${process.pid}`;
  const done = [];
  let flushing = null;
  const flush = () => {
    if (flushing !== null || done.length === 0) return;
    flushing = store.completeJobs({ workerId, jobs: done.splice(0) }).then(() => {
      flushing = null;
      flush();
    });
  };
  const loop = async () => {
    while (!controller.signal.aborted) {
      const claimed = await store.claimBatch({ queue, workerId, limit: STORE_LOOP_CLAIM, leaseMs: 60_000, takeOverExpired: false });
      if (claimed.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      await Promise.all(claimed.map((job) => handler(job.payload, { attempt: job.attempt })));
      for (const job of claimed) done.push({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 0 });
      flush();
      // Completions that fall behind hold the claims back rather than piling up.
      while (done.length > 4 * STORE_LOOP_CLAIM && flushing !== null) await flushing;
    }
    while (flushing !== null) await flushing;
    return { exitCode: 0 };
  };
  const promise = loop().catch((error) => {
    console.error(`[stint] store loop: ${error.stack ?? error.message}`);
    return { exitCode: 1 };
  });
  return { controller, promise };
}
