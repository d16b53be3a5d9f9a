import { expect } from "chai";
import { Counter, Registry } from "prom-client";
import { ConfigError } from "../../src/errors/config-errors";
import { PermanentError } from "../../src/errors/job-errors";
import { RunEvents } from "../../src/events/run-events";
import { WorkerEvents } from "../../src/events/worker-events";
import type { ClaimedJob } from "../../src/job/job-record";
import { JobMetrics } from "../../src/metrics/job-metrics";
import { TallyHistogram } from "../../src/metrics/tally-metrics";
import { ManualClock } from "../../src/testing/manual-clock";

interface ParsedFamily {
  readonly name: string;
  readonly type: string;
  readonly metrics: readonly { readonly labels?: Record<string, string>; readonly value?: string }[];
}
// The Prometheus text-format parser the CLI tests use; it ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an untyped CommonJS module, typed by the cast
const parseExposition = require("parse-prometheus-text-format") as (text: string) => ParsedFamily[];

function job(id: string, queue: string, runAt: number): ClaimedJob {
  return { id, queue, payload: {}, attempt: 1, maxAttempts: 3, priority: 0, timeoutMs: null, createdAt: new Date(0), runAt: new Date(runAt) };
}

async function scrape(registry: Registry): Promise<ParsedFamily[]> {
  return parseExposition(await registry.metrics());
}

/**
 * One histogram series from the registry's JSON (the text parser merges
 * the series of a labelled histogram, so it cannot tell them apart).
 */
async function histogramOf(registry: Registry, name: string, labels: Record<string, string>) {
  const metric = (await registry.getMetricsAsJSON()).find((family) => family.name === name);
  const matches = (value: { labels: Record<string, string | number | undefined> }) => Object.entries(labels).every(([key, text]) => value.labels[key] === text);
  const values = (metric?.values ?? []).filter(matches) as { metricName?: string; labels: Record<string, string | number>; value: number }[];
  const buckets: Record<string, number> = {};
  for (const value of values) if (value.metricName === `${name}_bucket`) buckets[String(value.labels["le"])] = value.value;
  return {
    count: values.find((value) => value.metricName === `${name}_count`)?.value,
    sum: values.find((value) => value.metricName === `${name}_sum`)?.value,
    buckets,
  };
}

function sampleOf(families: readonly ParsedFamily[], name: string, labels: Record<string, string>) {
  return families
    .find((family) => family.name === name)
    ?.metrics.find((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value));
}

describe("JobMetrics", () => {
  function setUp() {
    const registry = new Registry();
    const hub = new WorkerEvents();
    new JobMetrics(registry).subscribe(hub);
    const clock = new ManualClock(1_700_000_000_000);
    const events = new RunEvents([hub], { queue: "mail", workerId: "w1", clock });
    return { registry, clock, events };
  }

  it("counts outcomes and fills cumulative histograms, served in the text format", async () => {
    const { registry, clock, events } = setUp();
    for (let n = 0; n < 3; n += 1) {
      const claimed = job(String(n), "mail", clock.now() - 2_000);
      events.jobStarted(claimed);
      events.jobOutcome(claimed, { kind: "succeeded", result: null, resultJson: "null", inTransaction: false, durationMs: 20 }, "applied");
    }
    const failing = job("9", "mail", clock.now());
    events.jobStarted(failing);
    events.jobOutcome(failing, { kind: "retry", delayMs: 100, error: new Error("flaky"), durationMs: 400 }, "applied");
    events.jobOutcome(failing, { kind: "dead", error: new PermanentError("no"), durationMs: 7_000 }, "applied");

    const families = await scrape(registry);
    expect(families.find((family) => family.name === "stint_jobs_total")?.type).to.equal("COUNTER");
    expect(sampleOf(families, "stint_jobs_total", { queue: "mail", outcome: "succeeded" })?.value).to.equal("3");
    expect(sampleOf(families, "stint_jobs_total", { queue: "mail", outcome: "retried" })?.value).to.equal("1");
    expect(sampleOf(families, "stint_jobs_total", { queue: "mail", outcome: "dead" })?.value).to.equal("1");

    expect(families.find((family) => family.name === "stint_job_duration_seconds")?.type).to.equal("HISTOGRAM");
    const succeeded = await histogramOf(registry, "stint_job_duration_seconds", { queue: "mail", outcome: "succeeded" });
    expect(succeeded).to.deep.include({ count: 3 });
    expect(succeeded.sum).to.be.closeTo(0.06, 1e-9);
    expect(succeeded.buckets).to.include({ "0.01": 0, "0.025": 3, "3600": 3, "+Inf": 3 });
    const failed = await histogramOf(registry, "stint_job_duration_seconds", { queue: "mail", outcome: "failed" });
    expect(failed).to.deep.include({ count: 2, sum: 7.4 });
    expect(failed.buckets).to.include({ "0.25": 0, "0.5": 1, "5": 1, "10": 2, "+Inf": 2 });
    const wait = await histogramOf(registry, "stint_job_wait_seconds", { queue: "mail" });
    expect(wait).to.deep.include({ count: 4, sum: 6 });
    expect(wait.buckets).to.include({ "0.005": 1, "1": 1, "2.5": 4 });
  });

  it("keeps counting into the same series when a second run in the process shares the registry", async () => {
    const { registry, clock, events } = setUp();
    const hub = new WorkerEvents();
    new JobMetrics(registry).subscribe(hub);
    const second = new RunEvents([hub], { queue: "mail", workerId: "w2", clock });
    for (const run of [events, second])
      run.jobOutcome(job("1", "mail", 0), { kind: "succeeded", result: null, resultJson: "null", inTransaction: false, durationMs: 1 }, "applied");
    expect(sampleOf(await scrape(registry), "stint_jobs_total", { queue: "mail", outcome: "succeeded" })?.value).to.equal("2");
  });

  it("zeroes on registry.resetMetrics() and counts on afterwards", async () => {
    const { registry, events } = setUp();
    const outcome = { kind: "succeeded", result: null, resultJson: "null", inTransaction: false, durationMs: 1 } as const;
    events.jobOutcome(job("1", "mail", 0), outcome, "applied");
    registry.resetMetrics();
    expect(await histogramOf(registry, "stint_job_duration_seconds", { queue: "mail", outcome: "succeeded" })).to.deep.include({ count: 0, sum: 0 });
    events.jobOutcome(job("2", "mail", 0), outcome, "applied");
    expect(sampleOf(await scrape(registry), "stint_jobs_total", { queue: "mail", outcome: "succeeded" })?.value).to.equal("1");
  });

  it("refuses a registry that already has a metric of that name it did not make", () => {
    const registry = new Registry();
    new Counter({ name: "stint_jobs_total", help: "someone else's", registers: [registry] });
    expect(() => new JobMetrics(registry)).to.throw(ConfigError, /stint_jobs_total/);
  });

  it("ignores an observation that is not a finite number", async () => {
    const registry = new Registry();
    const histogram = TallyHistogram.in(registry, { name: "h_seconds", help: "h", labelNames: ["queue"], buckets: [1] });
    histogram.series({ queue: "q" }).observe(Number.NaN);
    histogram.series({ queue: "q" }).observe(0.5);
    expect(await histogramOf(registry, "h_seconds", { queue: "q" })).to.deep.include({ count: 1, sum: 0.5 });
  });
});
