import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { ProbeJob } from "../src/probe-job";
import type { ProbeProcess } from "../src/spawn-probe-workers";
import { useProbeProcesses } from "./probe-fixture";
import { eventually } from "@stint/core/testing";

describe("queue controls across real worker processes", function () {
  this.timeout(120_000);
  const fixture = useProbeProcesses({ defaultConcurrency: 10, maxConnections: 6 });
  const start = (env: Record<string, string> = {}, concurrency?: number): ProbeProcess => fixture.start(env, concurrency);
  const enqueue = (count: number) => fixture.schema().store.enqueueMany(Array.from({ length: count }, (_, seq) => buildNewJob(ProbeJob, { seq })));
  async function one<R>(query: ReturnType<typeof sql<R>>): Promise<R> {
    const { rows } = await query.execute(fixture.schema().db);
    return rows[0]!;
  }

  it("holds 4 processes × concurrency 10 to maxRunning 3: never more than 3 handlers at once, and the queue drains", async () => {
    await enqueue(120);
    await fixture.schema().store.setQueueControls(ProbeJob.name, { maxRunning: 3 });
    const probes = Array.from({ length: 4 }, () => start({ PROBE_SLEEP_MS: "20" }));
    const ended = await Promise.all(probes.map((probe) => probe.exited));
    expect(ended.map((end) => end.report?.report.stoppedBecause)).to.deep.equal(["drained", "drained", "drained", "drained"]);
    const { done, unfinished } = await one(sql<{ done: number; unfinished: number }>`
      select count(*) filter (where state = 'succeeded')::int as done, count(*) filter (where state <> 'succeeded')::int as unfinished
        from ${sql.id(fixture.schema().schema, "all_jobs")}`);
    expect({ done, unfinished }).to.deep.equal({ done: 120, unfinished: 0 });
    // Every handler's run, from its first statement to its last: at each start, how many were running.
    const { most } = await one(sql<{ most: number }>`
      select max(overlap)::int as most from (
        select (select count(*) from ${sql.id(fixture.schema().schema, "executions")} other where other.at <= e.at and other.done_at >= e.at) as overlap
          from ${sql.id(fixture.schema().schema, "executions")} e) samples`);
    expect(most).to.be.within(1, 3);
  });

  it("starts at most 250 + 10 % jobs in 5 s of backlog under rateLimit 50/s across 2 processes, and at least 70 % of that on a busy machine", async () => {
    await enqueue(1_000);
    await fixture.schema().store.setQueueControls(ProbeJob.name, { rateLimit: { limit: 50, periodMs: 1_000 } });
    const probes = [start({ MODE: "loop" }), start({ MODE: "loop" })];
    await eventually(
      async () =>
        (
          await one(
            sql<{
              over: boolean;
            }>`select coalesce(clock_timestamp() > min(at) + interval '5.5 seconds', false) as over from ${sql.id(fixture.schema().schema, "executions")}`,
          )
        ).over,
      { timeoutMs: 30_000, what: "5 s of starts" },
    );
    for (const probe of probes) probe.child.kill("SIGTERM");
    await Promise.all(probes.map((probe) => probe.exited));
    const { started } = await one(sql<{ started: number }>`
      select count(*)::int as started from ${sql.id(fixture.schema().schema, "executions")}
       where at < (select min(at) from ${sql.id(fixture.schema().schema, "executions")}) + interval '5 seconds'`);
    // The upper bound is the limit's promise; the lower one only shows the limit does not starve the queue,
    // since a loaded machine's late claims lose the 100 ms burst the bucket can hold.
    expect(started).to.be.within(175, 275);
  });

  it("pauses within 100 ms of the change (running jobs finish, held ones go back), and resume drains the rest", async () => {
    await enqueue(400);
    const probes = [start({ MODE: "loop", PROBE_SLEEP_MS: "150" }, 4), start({ MODE: "loop", PROBE_SLEEP_MS: "150" }, 4)];
    await eventually(async () => (await one(sql<{ n: number }>`select count(*)::int as n from ${sql.id(fixture.schema().schema, "executions")}`)).n >= 20, {
      timeoutMs: 30_000,
      what: "jobs to run",
    });
    await fixture.schema().store.setQueueControls(ProbeJob.name, { paused: true });
    const { pausedAt } = await one(sql<{ pausedAt: Date }>`select updated_at as "pausedAt" from ${sql.id(fixture.schema().schema, "queues")}`);
    // Long enough for every job that was running at the pause to finish.
    await eventually(
      async () =>
        (await one(sql<{ n: number }>`select count(*)::int as n from ${sql.id(fixture.schema().schema, "all_jobs")} where state = 'running'`)).n === 0,
      { timeoutMs: 10_000, what: "running jobs to finish and held ones to go back" },
    );
    const { late } = await one(sql<{ late: number }>`
      select count(*)::int as late from ${sql.id(fixture.schema().schema, "executions")} where at > ${pausedAt}::timestamptz + interval '100 milliseconds'`);
    expect(late, "handlers started more than 100 ms after the pause").to.equal(0);
    const { unfinished } = await one(
      sql<{ unfinished: number }>`select count(*)::int as unfinished from ${sql.id(fixture.schema().schema, "executions")} where done_at is null`,
    );
    expect(unfinished, "a running job was cut short").to.equal(0);

    await fixture.schema().store.setQueueControls(ProbeJob.name, { paused: false });
    await eventually(
      async () =>
        (await one(sql<{ n: number }>`select count(*)::int as n from ${sql.id(fixture.schema().schema, "all_jobs")} where state = 'succeeded'`)).n === 400,
      { timeoutMs: 60_000, what: "the rest to drain after the resume" },
    );
    for (const probe of probes) probe.child.kill("SIGTERM");
    await Promise.all(probes.map((probe) => probe.exited));
    const { runs, jobs } = await one(
      sql<{
        runs: number;
        jobs: number;
      }>`select count(*)::int as runs, count(distinct job_id)::int as jobs from ${sql.id(fixture.schema().schema, "executions")}`,
    );
    expect({ runs, jobs }).to.deep.equal({ runs: 400, jobs: 400 });
  });
});
