import { expect } from "chai";
import { Registry } from "prom-client";
import { ConfigError } from "../../src/errors/config-errors";
import { WorkerEvents } from "../../src/events/worker-events";
import { registerGroupGauges } from "../../src/metrics/group-gauges-metrics";
import { startRunMetrics } from "../../src/metrics/run-metrics";
import { newJob } from "../../src/testing/conformance/conformance-harness";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { ManualClock } from "../../src/testing/manual-clock";
import type { Logger } from "../../src/logging/logger";

/** The series of `stint_group_running_jobs` in the registry, as `queue/group value` lines, sorted. */
async function groupSeries(registry: Registry): Promise<string[]> {
  const metric = await registry.getSingleMetric("stint_group_running_jobs")?.get();
  return (metric?.values ?? []).map((value) => `${value.labels["queue"]}/${value.labels["group"]} ${value.value}`).sort();
}

describe("stint_group_running_jobs", () => {
  let store: InMemoryJobStore;

  beforeEach(() => {
    store = new InMemoryJobStore({ clock: new ManualClock() });
  });

  /** In `queue`, `running[n]` running jobs of group `g<n>`. */
  async function run(queue: string, running: readonly number[]): Promise<void> {
    for (const [n, count] of running.entries()) {
      await store.enqueueMany(Array.from({ length: count }, (_, k) => newJob(queue, { k }, { groupKey: `g${n}` })));
      await store.claimBatch({ queue, workerId: "w", limit: count, leaseMs: 60_000 });
    }
  }

  it("reports the running jobs of at most N groups a queue, those with the most running", async () => {
    await run("sync", [1, 3, 2]);
    await run("mail", [1]);
    const registry = new Registry();
    registerGroupGauges(registry, store, 2);
    expect(await groupSeries(registry)).to.deep.equal(["mail/g0 1", "sync/g1 3", "sync/g2 2"]);
  });

  it("drops a group from the scrape once nothing of it runs", async () => {
    await run("sync", [1]);
    const registry = new Registry();
    registerGroupGauges(registry, store, 10);
    expect(await groupSeries(registry)).to.deep.equal(["sync/g0 1"]);
    const [running] = await store.listJobs({ queue: "sync", states: ["running"], limit: 1 });
    await store.completeJobs({ workerId: "w", jobs: [{ id: running!.id, attempt: 1, resultJson: null, durationMs: 1 }] });
    expect(await groupSeries(registry)).to.deep.equal([]);
  });

  it("is on by default in a run's metrics, off with topGroups 0, and refuses a bad topGroups", async () => {
    await run("sync", [1]);
    const events = new WorkerEvents();
    const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
    const on = startRunMetrics({ registry: new Registry() }, { store, log, events });
    expect((await on.render()).body).to.contain('stint_group_running_jobs{queue="sync",group="g0"} 1');
    on.stop();
    const off = startRunMetrics({ registry: new Registry(), topGroups: 0 }, { store, log, events });
    expect((await off.render()).body).to.not.contain("stint_group_running_jobs");
    off.stop();
    expect(() => startRunMetrics({ registry: new Registry(), topGroups: 1.5 }, { store, log, events })).to.throw(ConfigError, /metrics\.topGroups/);
  });
});
