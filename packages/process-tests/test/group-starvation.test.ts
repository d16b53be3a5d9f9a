import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { ProbeJob } from "../src/probe-job";
import { useProbeProcesses } from "./probe-fixture";

/** Group a's backlog; `GROUP_STARVATION_A_JOBS=N` sets it and prints the measured figures (docs/benchmarks.md, "Groups"). */
const A_JOBS = Number(process.env["GROUP_STARVATION_A_JOBS"] ?? "100000");
const B_JOBS = 100;
const PROCESSES = 3;
const CONCURRENCY = 8;
const PREFETCH = 8;
/** A claim takes at most concurrency + prefetch jobs; one round is one claim by each process. */
const CLAIM_ROUND = PROCESSES * (CONCURRENCY + PREFETCH);

describe("a group behind another's backlog, across real worker processes", function () {
  this.timeout(600_000);
  const fixture = useProbeProcesses({ defaultConcurrency: CONCURRENCY, maxConnections: 6 });

  it(`starts group b's first job within one claim round of ${PROCESSES} processes, and finishes b before 5 % of a's ${A_JOBS} jobs ran`, async () => {
    const t = fixture.schema();
    const table = (name: string) => sql.id(t.schema, name);
    for (let from = 0; from < A_JOBS; from += 10_000) {
      const size = Math.min(10_000, A_JOBS - from);
      await t.store.enqueueMany(Array.from({ length: size }, (_, n) => buildNewJob(ProbeJob, { seq: from + n }, { group: "a" })));
    }
    const env = { MODE: "loop", PROBE_SLEEP_MS: "2", PROBE_PREFETCH: String(PREFETCH) };
    const probes = Array.from({ length: PROCESSES }, () => fixture.start(env));
    const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(t.db)).rows[0]!.n;
    // b arrives while a's backlog drains.
    await eventually(async () => (await count(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${table("executions")}`)) >= 200, {
      timeoutMs: 60_000,
      what: "a's backlog to start draining",
    });
    await t.store.enqueueMany(Array.from({ length: B_JOBS }, (_, n) => buildNewJob(ProbeJob, { seq: A_JOBS + n }, { group: "b" })));
    await eventually(
      async () =>
        (await count(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${table("all_jobs")} WHERE group_key = 'b' AND state = 'succeeded'`)) === B_JOBS,
      { timeoutMs: 120_000, what: "b's jobs to succeed" },
    );
    for (const probe of probes) probe.child.kill("SIGTERM");
    await Promise.all(probes.map((probe) => probe.exited));

    // b counts as enqueued from its transaction's start (created_at): a claim that began before can't have seen it, and
    // counts against b all the same.
    const { rows } = await sql<{ aStartedBeforeB: number; firstWaitMs: number; aDoneByBDone: number; bDrainMs: number }>`
      WITH b AS (SELECT max(created_at) AS enqueued, min(started_at) AS first_start, max(finished_at) AS last_done
                   FROM ${table("all_jobs")} WHERE group_key = 'b')
      SELECT (SELECT count(*) FROM ${table("all_jobs")} AS a
               WHERE a.group_key = 'a' AND a.started_at > b.enqueued AND a.started_at < b.first_start)::int AS "aStartedBeforeB",
             (extract(epoch FROM b.first_start - b.enqueued) * 1000)::float8 AS "firstWaitMs",
             (SELECT count(*) FROM ${table("all_jobs")} AS a WHERE a.group_key = 'a' AND a.finished_at <= b.last_done)::int AS "aDoneByBDone",
             (extract(epoch FROM b.last_done - b.enqueued) * 1000)::float8 AS "bDrainMs"
        FROM b`.execute(t.db);
    const measured = rows[0]!;
    if (process.env["GROUP_STARVATION_A_JOBS"] !== undefined)
      process.stdout.write(`      measured: ${JSON.stringify({ aJobs: A_JOBS, claimRound: CLAIM_ROUND, ...measured })}\n`);
    expect(measured.aStartedBeforeB, `a's jobs started between b's enqueue and b's first start (${measured.firstWaitMs} ms)`).to.be.at.most(CLAIM_ROUND);
    expect(measured.aDoneByBDone, `a's jobs done when b's last finished (${measured.bDrainMs} ms after b's enqueue)`).to.be.below(A_JOBS * 0.05);
  });
});
