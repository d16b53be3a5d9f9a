import { createServer } from "node:net";
import { expect } from "chai";
import { newJob } from "@stint/core/testing";
import { AbstractQueueWorker, createSilentLogger, defineJob, ExitCode, permanent, runWorkers, type JobStore, type RunReport } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { Registry } from "prom-client";
import { stint } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeRunningJobs } from "../helpers/job-states";
import { Exposition } from "../helpers/prometheus-text";
import { eventually } from "@stint/core/testing";

const Echo = defineJob<{ readonly fail?: boolean }>("metrics-echo", { maxAttempts: 2 });

class EchoWorker extends AbstractQueueWorker<{ readonly fail?: boolean }> {
  readonly job = Echo;
  constructor(store: JobStore) {
    super(store, createSilentLogger(), { concurrency: 4, backoff: { baseMs: 0, maxMs: 0 } });
  }
  protected parse(payload: unknown): { readonly fail?: boolean } {
    return payload as { readonly fail?: boolean };
  }
  protected async processItem(item: { readonly fail?: boolean }): Promise<unknown> {
    if (item.fail === true) throw permanent(new Error("asked to fail"));
    return "ok";
  }
}

/** A TCP port free right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

async function scrape(port: number): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  return { status: response.status, text: await response.text() };
}

describe("Prometheus metrics", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 8 });
  });
  afterEach(() => test.drop());

  /** The queue gauges of `exposition` match what `stint status --json` shows, queue by queue. */
  async function expectGaugesMatchStatus(exposition: Exposition): Promise<number> {
    const { queues } = (await stint(["status", "--schema", test.schema, "--json"])).json() as {
      queues: { queue: string; queued: number; due: number; running: number; retrying: number; dead: number; oldestDueAgeMs: number | null }[];
    };
    for (const row of queues) {
      const { queue } = row;
      expect(
        {
          queued: exposition.value("stint_jobs", { queue, state: "queued" }),
          retrying: exposition.value("stint_jobs", { queue, state: "failed" }),
          running: exposition.value("stint_jobs", { queue, state: "running" }),
          dead: exposition.value("stint_jobs", { queue, state: "dead" }),
          due: exposition.value("stint_jobs_due", { queue }),
        },
        queue,
      ).to.deep.equal({ queued: row.queued, retrying: row.retrying, running: row.running, dead: row.dead, due: row.due });
      const age = exposition.value("stint_queue_oldest_due_age_seconds", { queue });
      if (row.oldestDueAgeMs === null) expect(age).to.equal(0);
      else
        expect(age)
          .to.be.at.least(0)
          .and.closeTo(row.oldestDueAgeMs / 1_000, 5);
    }
    return queues.length;
  }

  it("counts a real worker run's jobs at /metrics, with gauges that match stint status", async () => {
    await test.store.enqueueMany([
      ...Array.from({ length: 20 }, () => ({
        queue: Echo.name,
        payloadJson: "{}",
        priority: 0,
        maxAttempts: 2,
        timeoutMs: null,
        runAt: null,
        delayMs: 0,
        dedupeKey: null,
      })),
      ...Array.from({ length: 3 }, () => ({
        queue: Echo.name,
        payloadJson: '{"fail":true}',
        priority: 0,
        maxAttempts: 2,
        timeoutMs: null,
        runAt: null,
        delayMs: 0,
        dedupeKey: null,
      })),
    ]);
    await enqueueJobs(test.store, "metrics-idle", 4);
    await makeRunningJobs(test.store, "metrics-held", 2);
    await makeDeadJobs(test.store, "metrics-held", 1);
    const port = await freePort();
    const stop = new AbortController();
    const registry = new Registry();
    const run: Promise<RunReport> = runWorkers({
      workers: [new EchoWorker(test.store)],
      mode: "loop",
      store: test.store,
      log: createSilentLogger(),
      healthPort: port,
      signal: stop.signal,
      pollIntervalMs: 50,
      metrics: { registry },
    });
    /** A histogram series' observation count, read from the registry (the text parser merges labelled histogram series). */
    const observations = async (name: string, labels: Readonly<Record<string, string>>): Promise<number | undefined> => {
      const { values } = await registry.getSingleMetric(name)!.get();
      const count = values.find(
        (value) =>
          (value as { metricName?: string }).metricName === `${name}_count` && Object.entries(labels).every(([key, text]) => value.labels[key] === text),
      );
      return count?.value;
    };
    try {
      const exposition = await eventually(
        async () => {
          const page = await scrape(port).catch(() => undefined);
          if (page?.status !== 200) return undefined;
          const parsed = new Exposition(page.text);
          return parsed.value("stint_jobs_total", { queue: Echo.name, outcome: "succeeded" }) === 20 &&
            parsed.value("stint_jobs_total", { queue: Echo.name, outcome: "dead" }) === 3
            ? parsed
            : undefined;
        },
        { timeoutMs: 20_000, what: "the run's jobs to be counted" },
      );
      expect(exposition.family("stint_jobs_total")?.type).to.equal("COUNTER");
      expect(exposition.value("stint_jobs_total", { queue: Echo.name, outcome: "retried" })).to.equal(0);
      expect(await observations("stint_job_duration_seconds", { queue: Echo.name, outcome: "succeeded" })).to.equal(20);
      expect(await observations("stint_job_duration_seconds", { queue: Echo.name, outcome: "failed" })).to.equal(3);
      expect(await observations("stint_job_wait_seconds", { queue: Echo.name })).to.equal(23);
      expect(exposition.family("stint_job_wait_seconds")?.type).to.equal("HISTOGRAM");
      expect(exposition.family("stint_job_duration_seconds")?.type).to.equal("HISTOGRAM");
      expect(exposition.value("stint_jobs", { queue: "metrics-idle", state: "queued" })).to.equal(4);
      expect(exposition.value("stint_jobs", { queue: "metrics-held", state: "running" })).to.equal(2);
      expect(exposition.value("stint_jobs", { queue: Echo.name, state: "dead" })).to.equal(3);
      expect(await expectGaugesMatchStatus(exposition)).to.equal(3);
    } finally {
      stop.abort();
      await run;
    }
    const report = await run;
    expect(report.workers[0]).to.include({ succeeded: 20, dead: 3 });
  });

  it("serves no /metrics when a run turns metrics off", async () => {
    const port = await freePort();
    const stop = new AbortController();
    const run = runWorkers({
      workers: [new EchoWorker(test.store)],
      mode: "loop",
      store: test.store,
      log: createSilentLogger(),
      healthPort: port,
      signal: stop.signal,
      metrics: false,
    });
    try {
      const page = await eventually(() => scrape(port), { timeoutMs: 20_000, what: "the health server" });
      expect(page.status).to.equal(404);
    } finally {
      stop.abort();
      await run;
    }
  });

  it("prints the queue gauges once with stint metrics, matching stint status", async () => {
    await enqueueJobs(test.store, "alpha", 3);
    await makeRunningJobs(test.store, "beta", 2);
    await makeDeadJobs(test.store, "beta", 1);
    const result = await stint(["metrics", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Ok);
    const exposition = new Exposition(result.stdout);
    expect(exposition.families.map((family) => family.name).sort()).to.deep.equal([
      "stint_group_running_jobs",
      "stint_jobs",
      "stint_jobs_due",
      "stint_queue_oldest_due_age_seconds",
    ]);
    expect(await expectGaugesMatchStatus(exposition)).to.equal(2);
  });

  it("reports the running jobs of each queue's busiest groups, --top-groups of them", async () => {
    await test.store.enqueueMany([0, 1, 2].flatMap((n) => Array.from({ length: n + 1 }, (_, k) => newJob("sync", { k }, { groupKey: `tenant-${n}` }))));
    await test.store.claimBatch({ queue: "sync", workerId: "w", limit: 6, leaseMs: 60_000 });
    const top = new Exposition((await stint(["metrics", "--top-groups", "2", "--schema", test.schema])).stdout);
    const series = top.families.find((family) => family.name === "stint_group_running_jobs")?.metrics ?? [];
    expect(series.map((metric) => [metric.labels?.["group"], Number(metric.value)])).to.deep.equal([
      ["tenant-2", 3],
      ["tenant-1", 2],
    ]);
    const none = new Exposition((await stint(["metrics", "--top-groups", "0", "--schema", test.schema])).stdout);
    expect(none.families.map((family) => family.name)).to.not.include("stint_group_running_jobs");
  });

  it("serves the queue gauges at /metrics with --port until stopped", async () => {
    await enqueueJobs(test.store, "alpha", 2);
    const port = await freePort();
    const stop = new AbortController();
    const served = stint(["metrics", "--port", String(port), "--schema", test.schema], { signal: stop.signal });
    try {
      const page = await eventually(() => scrape(port), { timeoutMs: 20_000, what: "the metrics server" });
      expect(page.status).to.equal(200);
      expect(new Exposition(page.text).value("stint_jobs_due", { queue: "alpha" })).to.equal(2);
    } finally {
      stop.abort();
    }
    expect((await served).code).to.equal(ExitCode.Ok);
  });

  it("refuses a port that is not one, naming the option", async () => {
    const result = await stint(["metrics", "--port", "http", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.contain("--port");
  });
});
