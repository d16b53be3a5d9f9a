import { expect } from "chai";
import { sql } from "kysely";
import { ErrorCode, JobClient, step, WorkflowFailedError, type EnqueuedWorkflow } from "@stint/core";
import { eventually } from "@stint/core/testing";
import type { TestSchema } from "@stint/postgres-driver/testing";
import type { ProbeProcess } from "../src/spawn-probe-workers";
import { StepProbeJob, type StepProbe } from "../src/step-probe-job";
import { useProbeProcesses } from "./probe-fixture";

/** One workflow step of the probe kind, waiting for `after`. */
const probe = (payload: StepProbe, after: string[] = []) => step(StepProbeJob, payload, { after });
/** The test's store has no completion source (no LISTEN connection): its waits read the workflow this often. */
const POLL_MS = 25;

describe("workflows across real worker processes", function () {
  this.timeout(240_000);
  const fixture = useProbeProcesses({ defaultConcurrency: 4, maxConnections: 6 });
  async function rows<R>(query: ReturnType<typeof sql<R>>): Promise<R[]> {
    return (await query.execute(fixture.schema().db)).rows;
  }
  const table = (name: string) => sql.id(fixture.schema().schema, name);
  const loop = { MODE: "loop", PROBE_QUEUES: StepProbeJob.name, POLL_INTERVAL_MS: "200" };

  /** Starts `count` step processes and waits until each has connected, so the first workflow finds them all claiming. */
  async function startSteppers(count: number, env: Record<string, string>, concurrency: number): Promise<ProbeProcess[]> {
    const started = Array.from({ length: count }, () => fixture.start(env, concurrency));
    const names = started.map((probe) => `stint:probe:${probe.child.pid}%`);
    await eventually(
      async () => {
        const [seen] = await rows(sql<{ n: number }>`
          SELECT count(DISTINCT pattern)::int AS n FROM unnest(${names}::text[]) AS pattern
           WHERE EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name LIKE pattern)`);
        return seen!.n === count;
      },
      { timeoutMs: 60_000, what: `${count} step processes to connect` },
    );
    return started;
  }
  async function stopAll(probes: readonly ProbeProcess[]): Promise<void> {
    for (const probe of probes) if (probe.child.exitCode === null && probe.child.signalCode === null) probe.child.kill("SIGTERM");
    const ended = await Promise.all(probes.map((probe) => probe.exited));
    expect(
      ended.map((end) => end.code),
      ended.map((end) => end.stderr).join("\n"),
    ).to.deep.equal(probes.map(() => 0));
  }

  /**
   * Every handler run of every step of `workflow` started after each step
   * it waits for had succeeded: its start (the handler's first statement,
   * on the database's clock) later than the dependency's `finished_at`
   * (the start of the transaction that recorded the success, which the
   * dependent could only be claimed after). The edges are `getWorkflow`'s.
   */
  async function assertStepOrder(t: TestSchema, workflow: { readonly id: string }): Promise<{ edges: number; runs: number }> {
    const stored = (await t.store.getWorkflow({ id: workflow.id }))!;
    const dependents = stored.steps.flatMap((entry) => entry.after.map(() => entry.jobId));
    const dependencies = stored.steps.flatMap((entry) => entry.after);
    const [order] = await rows(sql<{ edges: number; runs: number; early: number; unfinished: number }>`
      WITH edge AS (SELECT * FROM unnest(${dependents}::bigint[], ${dependencies}::bigint[]) AS edge(job_id, needs_id))
      SELECT count(DISTINCT edge.*)::int AS edges, count(*)::int AS runs,
             count(*) FILTER (WHERE e.at <= dep.finished_at)::int AS early,
             count(*) FILTER (WHERE dep.state <> 'succeeded' OR dep.finished_at IS NULL)::int AS unfinished
        FROM edge JOIN ${table("executions")} AS e ON e.job_id = edge.job_id JOIN ${table("all_jobs")} AS dep ON dep.id = edge.needs_id`);
    expect(order!.edges).to.equal(dependents.length);
    expect({ early: order!.early, unfinished: order!.unfinished }, "runs started before a dependency had succeeded").to.deep.equal({
      early: 0,
      unfinished: 0,
    });
    return { edges: order!.edges, runs: order!.runs };
  }

  /** Each job ran exactly once, to its end, on attempt 1, and succeeded. */
  async function assertEachRanOnce(expected: number): Promise<void> {
    const [runs] = await rows(sql<{ jobs: number; succeeded: number; runs: number; done: number; ran: number; retried: number }>`
      SELECT (SELECT count(*)::int FROM ${table("all_jobs")}) AS jobs,
             (SELECT count(*)::int FROM ${table("all_jobs")} WHERE state = 'succeeded') AS succeeded,
             (SELECT count(*)::int FROM ${table("all_jobs")} WHERE attempts <> 1) AS retried,
             (SELECT count(*)::int FROM ${table("executions")}) AS runs,
             (SELECT count(*)::int FROM ${table("executions")} WHERE ended_how = 'done') AS done,
             (SELECT count(DISTINCT job_id)::int FROM ${table("executions")}) AS ran`);
    expect(runs).to.deep.equal({ jobs: expected, succeeded: expected, retried: 0, runs: expected, done: expected, ran: expected });
  }

  /** The one run of step `seq`: its worker and what it read of its dependencies. */
  async function runOf(seq: number): Promise<{ worker_id: string; dependency_seqs: number[] | null }> {
    const found = await rows(sql<{ worker_id: string; dependency_seqs: number[] | null }>`
      SELECT worker_id, dependency_seqs FROM ${table("executions")} WHERE seq = ${seq}`);
    expect(found, `runs of step ${seq}`).to.have.length(1);
    return found[0]!;
  }

  it("runs c exactly once, after both, when a and b finish at the same moment in two processes, 200 times", async function () {
    // 200 rounds one after the other, about half a second each on an idle machine.
    this.timeout(480_000);
    const t = fixture.schema();
    const client = new JobClient(t.store);
    const rounds = 200;
    // One slot and no prefetch per process: a process runs a or b, never both, so the two successes commit in two processes.
    const steppers = await startSteppers(2, { ...loop, PROBE_PREFETCH: "0" }, 1);
    const workflows: EnqueuedWorkflow[] = [];
    try {
      for (let round = 0; round < rounds; round += 1) {
        const seq = round * 3;
        // Both hold until one instant, by which both processes have claimed theirs (a wake-up takes milliseconds).
        const holdUntil = Date.now() + 150;
        const workflow = await client.enqueueWorkflow(`race-${round}`, {
          a: probe({ seq, holdUntil }),
          b: probe({ seq: seq + 1, holdUntil }),
          c: probe({ seq: seq + 2, readDependencies: true }, ["a", "b"]),
        });
        workflows.push(workflow);
        expect(await client.waitFor(workflow, { timeoutMs: 20_000, pollIntervalMs: POLL_MS })).to.deep.equal({ c: { seq: seq + 2 } });
      }
    } finally {
      await stopAll(steppers);
    }
    await assertEachRanOnce(rounds * 3);
    for (const workflow of workflows) await assertStepOrder(t, workflow);
    // c read both results, in enqueue order, every round.
    const [reads] = await rows(sql<{ wrong: number }>`
      SELECT count(*)::int AS wrong FROM ${table("executions")} WHERE seq % 3 = 2 AND dependency_seqs IS DISTINCT FROM ARRAY[seq - 2, seq - 1]`);
    expect(reads!.wrong).to.equal(0);
    // The race was run: a and b in two processes, their successes committed within a few milliseconds of each other.
    // On a loaded machine a process may claim late (after its poll, not its wake-up): then the other one may have run
    // both, or the two finish apart. The checks above hold whatever happened; these show the race was run most rounds.
    const [race] = await rows(sql<{ apart: number; close: number; widest_ms: number }>`
      WITH pair AS (
        SELECT ea.worker_id <> eb.worker_id AS apart, abs(extract(epoch FROM ja.finished_at - jb.finished_at) * 1000) AS ms
          FROM ${table("executions")} AS ea JOIN ${table("executions")} AS eb ON eb.seq = ea.seq + 1
          JOIN ${table("all_jobs")} AS ja ON ja.id = ea.job_id JOIN ${table("all_jobs")} AS jb ON jb.id = eb.job_id
         WHERE ea.seq % 3 = 0)
      SELECT count(*) FILTER (WHERE apart)::int AS apart, count(*) FILTER (WHERE apart AND ms < 20)::int AS close,
             round(max(ms))::int AS widest_ms FROM pair`);
    expect(race!.apart, `a and b ran in two processes in ${race!.apart} of ${rounds} rounds`).to.be.at.least(rounds * 0.9);
    expect(race!.close, `successes within 20 ms in ${race!.close} of ${rounds} rounds (widest ${race!.widest_ms} ms)`).to.be.at.least(rounds / 4);
  });

  it("runs 20 diamonds drained by 2 processes: the join once, after both branches, which finish together", async () => {
    const t = fixture.schema();
    const client = new JobClient(t.store);
    const steppers = await startSteppers(2, { ...loop, PROBE_PREFETCH: "0" }, 4);
    const holdUntil = Date.now() + 1_000;
    const workflows = [];
    try {
      for (let n = 0; n < 20; n += 1) {
        const seq = n * 4;
        workflows.push(
          await client.enqueueWorkflow(`diamond-${n}`, {
            top: probe({ seq }),
            left: probe({ seq: seq + 1, holdUntil }, ["top"]),
            right: probe({ seq: seq + 2, holdUntil }, ["top"]),
            join: probe({ seq: seq + 3, readDependencies: true }, ["left", "right"]),
          }),
        );
      }
      for (const [n, workflow] of workflows.entries())
        expect(await client.waitFor(workflow, { timeoutMs: 60_000, pollIntervalMs: POLL_MS })).to.deep.equal({ join: { seq: n * 4 + 3 } });
    } finally {
      await stopAll(steppers);
    }
    await assertEachRanOnce(80);
    for (const workflow of workflows) expect(await assertStepOrder(t, workflow)).to.deep.equal({ edges: 4, runs: 4 });
    for (let n = 0; n < 20; n += 1) expect((await runOf(n * 4 + 3)).dependency_seqs).to.deep.equal([n * 4 + 1, n * 4 + 2]);
    const [workers] = await rows(sql<{ n: number }>`SELECT count(DISTINCT worker_id)::int AS n FROM ${table("executions")}`);
    expect(workers!.n, "both processes ran steps").to.equal(2);
  });

  it("fans out to 1,000 steps drained by 2 processes and fans in once, after all of them, reading all 1,000 results in one call", async () => {
    const t = fixture.schema();
    const client = new JobClient(t.store);
    const width = 1_000;
    const steppers = await startSteppers(2, loop, 8);
    let workflow;
    try {
      workflow = await client.enqueueWorkflow("fan", {
        root: probe({ seq: 0 }),
        fan: Array.from({ length: width }, (_, n) => probe({ seq: n + 1 }, ["root"])),
        merge: probe({ seq: width + 1, readDependencies: true }, ["fan"]),
      });
      expect(await client.waitFor(workflow, { timeoutMs: 120_000, pollIntervalMs: POLL_MS })).to.deep.equal({ merge: { seq: width + 1 } });
    } finally {
      await stopAll(steppers);
    }
    await assertEachRanOnce(width + 2);
    expect(await assertStepOrder(t, workflow)).to.deep.equal({ edges: 2 * width, runs: 2 * width });
    const merge = await runOf(width + 1);
    expect(merge.dependency_seqs, "the fan-in read every result, in enqueue order").to.deep.equal(Array.from({ length: width }, (_, n) => n + 1));
    const [fan] = await rows(sql<{ workers: number; last_done: Date; merge_at: Date }>`
      SELECT count(DISTINCT e.worker_id)::int AS workers, max(j.finished_at) AS last_done,
             (SELECT at FROM ${table("executions")} WHERE seq = ${width + 1}) AS merge_at
        FROM ${table("executions")} AS e JOIN ${table("all_jobs")} AS j ON j.id = e.job_id WHERE e.seq BETWEEN 1 AND ${width}`);
    expect(fan!.workers, "both processes ran fan-out steps").to.equal(2);
    expect(fan!.merge_at.getTime()).to.be.at.least(fan!.last_done.getTime());
    expect((await t.store.getWorkflow({ id: workflow.id }))?.state).to.equal("succeeded");
  });

  it("adds 200 steps with ctx.addSteps in a worker process; the step after the adder waits for them all and reads them", async () => {
    const t = fixture.schema();
    const client = new JobClient(t.store);
    const added = 200;
    const steppers = await startSteppers(2, loop, 4);
    let workflow;
    try {
      workflow = await client.enqueueWorkflow("dynamic", {
        list: probe({ seq: 0, addSteps: added }),
        report: probe({ seq: 10_000, readDependencies: true }, ["list"]),
      });
      expect(await client.waitFor(workflow, { timeoutMs: 60_000, pollIntervalMs: POLL_MS })).to.deep.equal({ report: { seq: 10_000 } });
    } finally {
      await stopAll(steppers);
    }
    await assertEachRanOnce(added + 2);
    const stored = (await t.store.getWorkflow({ id: workflow.id }))!;
    expect(stored.state).to.equal("succeeded");
    expect(stored.steps.filter((entry) => entry.step === "added")).to.have.length(added);
    const report = stored.steps.find((entry) => entry.step === "report")!;
    expect(report.after, "report waits for the adder and every added step").to.have.length(added + 1);
    expect(await assertStepOrder(t, workflow)).to.deep.equal({ edges: added + 1, runs: added + 1 });
    expect((await runOf(10_000)).dependency_seqs).to.deep.equal(Array.from({ length: added + 1 }, (_, n) => n));
  });

  it("cancels a running workflow: its running steps' handlers see STINT_CANCELLED at once, and nothing else of it runs", async () => {
    const t = fixture.schema();
    const client = new JobClient(t.store);
    // A 30 s lease: a heartbeat would tell the cancel seconds later; only the cancel notice tells it within a second.
    const steppers = await startSteppers(2, { ...loop, PROBE_PREFETCH: "0", PROBE_LEASE_MS: "30000" }, 1);
    try {
      const holdUntil = Date.now() + 120_000;
      const workflow = await client.enqueueWorkflow("cancelled", {
        left: probe({ seq: 0, holdUntil }),
        right: probe({ seq: 1, holdUntil }),
        next: probe({ seq: 2 }, ["left", "right"]),
        last: probe({ seq: 3 }, ["next"]),
      });
      await eventually(async () => (await rows(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${table("executions")}`))[0]!.n === 2, {
        timeoutMs: 20_000,
        what: "both long steps to start",
      });
      const [clock] = await rows(sql<{ at: Date }>`SELECT clock_timestamp() AS at`);
      expect(await client.cancelWorkflow(workflow)).to.equal(4);
      const ended = await eventually(
        async () => {
          const runs = await rows(sql<{ seq: number; ended_how: string | null; after_ms: number }>`
            SELECT seq, ended_how, (extract(epoch FROM done_at - ${clock!.at}::timestamptz) * 1000)::int AS after_ms
              FROM ${table("executions")} ORDER BY seq`);
          return runs.every((run) => run.ended_how !== null) ? runs : undefined;
        },
        { timeoutMs: 20_000, what: "both handlers to stop" },
      );
      expect(ended.map((run) => [run.seq, run.ended_how])).to.deep.equal([
        [0, `aborted:${ErrorCode.Cancelled}`],
        [1, `aborted:${ErrorCode.Cancelled}`],
      ]);
      for (const run of ended) expect(run.after_ms, "ms from the cancel to the handler's abort").to.be.below(1_000);
      const waited = await client.waitFor(workflow, { timeoutMs: 10_000, pollIntervalMs: POLL_MS }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(waited).to.be.instanceOf(WorkflowFailedError);
      const stored = (await t.store.getWorkflow({ id: workflow.id }))!;
      expect(stored.state).to.equal("cancelled");
      expect(stored.cancelledAt).to.be.instanceOf(Date);
      // The running steps are cancelled as cancelJob cancels a running job (the reason is in their attempt's history); the others with the workflow's reason.
      expect(stored.steps.map((entry) => [entry.step, entry.state, entry.errorCode, entry.lastError, entry.attempts])).to.deep.equal([
        ["left", "cancelled", null, null, 1],
        ["right", "cancelled", null, null, 1],
        ["next", "cancelled", ErrorCode.Cancelled, "the workflow was cancelled", 0],
        ["last", "cancelled", ErrorCode.Cancelled, "the workflow was cancelled", 0],
      ]);
      for (const running of stored.steps.slice(0, 2)) {
        const attempts = await t.store.listAttempts({ jobId: running.jobId });
        expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.error?.code])).to.deep.equal([[1, "cancelled", ErrorCode.Cancelled]]);
      }
      // The processes go on: a later workflow runs in their freed slots, and still nothing of the cancelled one runs.
      const later = await client.enqueueWorkflow("later", { one: probe({ seq: 100 }), two: probe({ seq: 101 }, ["one"]) });
      expect(await client.waitFor(later, { timeoutMs: 20_000, pollIntervalMs: POLL_MS })).to.deep.equal({ two: { seq: 101 } });
    } finally {
      await stopAll(steppers);
    }
    const runs = await rows(sql<{ seq: number; attempt: number }>`SELECT seq, attempt FROM ${table("executions")} ORDER BY seq`);
    expect(runs.map((run) => [run.seq, run.attempt])).to.deep.equal([
      [0, 1],
      [1, 1],
      [100, 1],
      [101, 1],
    ]);
  });
});
