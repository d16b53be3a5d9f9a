import { expect } from "chai";
import { sql } from "kysely";
import { QueueAdmin } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { ProbeJob, type Probe } from "../src/probe-job";
import type { ProbeProcess } from "../src/spawn-probe-workers";
import { useProbeProcesses } from "./probe-fixture";
import { sampleRunningPerGroup } from "./running-sampler";

describe("serial lines across real worker processes", function () {
  this.timeout(240_000);
  const fixture = useProbeProcesses({ defaultConcurrency: 4, maxConnections: 6 });
  async function rows<R>(query: ReturnType<typeof sql<R>>): Promise<R[]> {
    return (await query.execute(fixture.schema().db)).rows;
  }
  const table = (name: string) => sql.id(fixture.schema().schema, name);
  async function count(query: ReturnType<typeof sql<{ n: number }>>): Promise<number> {
    return (await rows(query))[0]!.n;
  }
  const succeeded = () => count(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${table("all_jobs")} WHERE state = 'succeeded'`);
  async function stopAll(probes: readonly ProbeProcess[]): Promise<void> {
    for (const probe of probes) if (probe.child.exitCode === null && probe.child.signalCode === null) probe.child.kill("SIGTERM");
    await Promise.all(probes.map((probe) => probe.exited));
  }

  it("runs 20 lines × 50 jobs in enqueue order, one at a time per line, across 4 processes of which 5 are SIGKILLed mid-drain, with retries", async () => {
    const t = fixture.schema();
    const lines = 20;
    const perLine = 50;
    const total = lines * perLine;
    // Lines interleaved in enqueue order, as producers would write them; within a line, ids are the enqueue order. One
    // job in 7 fails its first attempt: its line holds until the retry succeeds.
    await t.store.enqueueMany(
      Array.from({ length: total }, (_, seq) =>
        buildNewJob(ProbeJob, { seq, ...(seq % 7 === 3 ? { fail: "retry-once" as const } : {}) }, { serialKey: `line-${seq % lines}` }),
      ),
    );
    // A running cap far above the slots: claims of the queue take turns on its row, as they do under any queue control.
    await t.store.setQueueControls(ProbeJob.name, { maxRunning: 100 });
    const sampler = sampleRunningPerGroup(t, ProbeJob.name, 10);
    const env = { MODE: "loop", PROBE_SLEEP_MS: "20", PROBE_LEASE_MS: "1500" };
    const alive = Array.from({ length: 4 }, () => fixture.start(env));
    const all = [...alive];
    let kills: number;
    try {
      for (kills = 0; kills < 5; kills += 1) {
        const progress = ((kills + 1) * total) / 7;
        await eventually(async () => (await succeeded()) >= progress, { timeoutMs: 60_000, what: `${Math.round(progress)} jobs to succeed` });
        const victim = alive.splice(Math.floor(Math.random() * alive.length), 1)[0]!;
        victim.child.kill("SIGKILL");
        expect((await victim.exited).signal).to.equal("SIGKILL");
        const heir = fixture.start(env);
        alive.push(heir);
        all.push(heir);
      }
      await eventually(async () => (await succeeded()) === total, { timeoutMs: 120_000, what: "every job to succeed" });
    } finally {
      await stopAll(alive);
    }
    const seen = await sampler.stop();
    expect(kills).to.equal(5);
    expect(seen.most, `most running of one line in ${seen.samples} samples`).to.equal(1);

    const [states] = await rows(sql<{ done: number; other: number }>`
      SELECT count(*) FILTER (WHERE state = 'succeeded')::int AS done, count(*) FILTER (WHERE state <> 'succeeded')::int AS other FROM ${table("all_jobs")}`);
    expect(states).to.deep.equal({ done: total, other: 0 });
    // The run that counted: the handler's run of the job's last attempt, finished. Exactly one per job.
    const [wins] = await rows(sql<{ wins: number; jobs: number }>`
      SELECT count(*)::int AS wins, count(DISTINCT e.job_id)::int AS jobs
        FROM ${table("executions")} AS e JOIN ${table("all_jobs")} AS j ON j.id = e.job_id AND e.attempt = j.attempts
       WHERE e.done_at IS NOT NULL`);
    expect(wins).to.deep.equal({ wins: total, jobs: total });
    const attempts = await count(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${table("executions")}`);
    expect(attempts, "the kills cost some jobs a second attempt").to.be.greaterThan(total);
    // In each line, every run of a job (any attempt) starts after the counted run of the job before it had finished.
    const [order] = await rows(sql<{ pairs: number; broken: number }>`
      WITH line AS (SELECT id, group_key, attempts, row_number() OVER (PARTITION BY group_key ORDER BY id) AS n FROM ${table("all_jobs")}),
           counted AS (SELECT line.group_key, line.n, e.done_at FROM line JOIN ${table("executions")} AS e
                         ON e.job_id = line.id AND e.attempt = line.attempts AND e.done_at IS NOT NULL),
           first AS (SELECT line.group_key, line.n, min(e.at) AS at FROM line JOIN ${table("executions")} AS e ON e.job_id = line.id GROUP BY 1, 2)
      SELECT count(*)::int AS pairs, count(*) FILTER (WHERE first.at <= counted.done_at)::int AS broken
        FROM first JOIN counted ON counted.group_key = first.group_key AND counted.n = first.n - 1`);
    expect(order).to.deep.equal({ pairs: total - lines, broken: 0 });
    expect(all.length).to.equal(9);
  });

  describe("a dead job holding its line", () => {
    const line = (key: string, payloads: readonly Probe[]) =>
      fixture.schema().store.enqueueMany(payloads.map((payload) => buildNewJob(ProbeJob, payload, { serialKey: key })));
    const jobsOf = (key: string) =>
      rows(sql<{ id: string; state: string; runs: number }>`
        SELECT j.id::text, j.state, (SELECT count(*)::int FROM ${table("executions")} AS e WHERE e.job_id = j.id) AS runs
          FROM ${table("all_jobs")} AS j WHERE j.group_key = ${key} ORDER BY j.id`);
    const runOrder = async (key: string) =>
      (
        await rows(sql<{ seq: number }>`
        SELECT e.seq FROM ${table("executions")} AS e JOIN ${table("all_jobs")} AS j ON j.id = e.job_id
         WHERE j.group_key = ${key} AND e.done_at IS NOT NULL ORDER BY e.at`)
      ).map((row) => row.seq);

    /** Runs `held`'s head into its death, shows the rest wait while other lines go on, and returns the head's id. */
    async function holdLine(held: string): Promise<{ headId: string; worker: ProbeProcess }> {
      await line(held, [{ seq: 0, fail: "permanent" }, { seq: 1 }, { seq: 2 }, { seq: 3 }, { seq: 4 }]);
      await line("other", [{ seq: 10 }, { seq: 11 }, { seq: 12 }]);
      const worker = fixture.start({ MODE: "loop", PROBE_SLEEP_MS: "10" });
      const [head] = await jobsOf(held);
      await eventually(async () => (await jobsOf(held))[0]?.state === "dead", { timeoutMs: 30_000, what: "the head to die" });
      // A job enqueued after the death runs: claims go on, and the held line's jobs are passed over, not missed.
      await line("later", [{ seq: 20 }]);
      await eventually(async () => (await jobsOf("later"))[0]?.state === "succeeded", { timeoutMs: 30_000, what: "a later line's job" });
      await eventually(async () => (await jobsOf("other")).every((job) => job.state === "succeeded"), { timeoutMs: 30_000, what: "another line" });
      expect((await jobsOf(held)).map((job) => [job.state, job.runs])).to.deep.equal([
        ["dead", 1],
        ["queued", 0],
        ["queued", 0],
        ["queued", 0],
        ["queued", 0],
      ]);
      return { headId: head!.id, worker };
    }

    it("keeps the rest of the line waiting in a real run, and releaseLine lets them go on in order", async () => {
      await holdLine("account-7");
      expect(await new QueueAdmin(fixture.schema().store).releaseLine(ProbeJob.name, "account-7")).to.equal(true);
      await eventually(async () => (await jobsOf("account-7")).filter((job) => job.state === "succeeded").length === 4, {
        timeoutMs: 30_000,
        what: "the released line to run",
      });
      expect((await jobsOf("account-7"))[0]!.state, "the dead job stays dead").to.equal("dead");
      expect(await runOrder("account-7")).to.deep.equal([1, 2, 3, 4]);
    });

    it("runs the retried head first, then the rest in order", async () => {
      const t = fixture.schema();
      const { headId } = await holdLine("account-8");
      // The cause is fixed: the retried head succeeds.
      await sql`UPDATE ${table("finished_jobs")} SET payload = payload - 'fail' WHERE id = ${headId}::bigint`.execute(t.db);
      expect(await t.store.retryJob({ id: headId })).to.equal(true);
      await eventually(async () => (await jobsOf("account-8")).every((job) => job.state === "succeeded"), {
        timeoutMs: 30_000,
        what: "the retried line to run",
      });
      expect(await runOrder("account-8")).to.deep.equal([0, 1, 2, 3, 4]);
    });
  });
});
