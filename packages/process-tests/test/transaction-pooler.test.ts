import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { ProbeJob } from "../src/probe-job";
import { createExecutionsTable } from "../src/probe-worker";
import { startProbeProcess, type ProbeProcess } from "../src/spawn-probe-workers";

/** How many of a process's log lines carry the warning `code` (Node prints a process warning as `[CODE] Warning: …`). */
function warnings(probe: ProbeProcess, code: string): number {
  return probe.logLines.filter((line) => line.includes(`[${code}] Warning:`)).length;
}

describe("worker processes behind PgBouncer in transaction mode, with DATABASE_URL alone", () => {
  let t: TestSchema;
  let bouncer: ThrowawayPgBouncer;
  const running: ProbeProcess[] = [];

  before(async () => {
    t = await createTestSchema();
    await createExecutionsTable(t.db, t.schema);
    // A stock PgBouncer: transaction pooling, and no startup parameter it would ignore.
    bouncer = await ThrowawayPgBouncer.start({ upstream: t.connectionString, poolMode: "transaction", poolSize: 10 });
  });
  after(async () => {
    await bouncer?.stop();
    await t?.drop();
  });
  beforeEach(async () => {
    await sql`TRUNCATE ${sql.id(t.schema, "jobs")}, ${sql.id(t.schema, "finished_jobs")}, ${sql.id(t.schema, "executions")}`.execute(t.db);
  });
  afterEach(async () => {
    for (const probe of running.splice(0)) {
      if (probe.child.exitCode === null && probe.child.signalCode === null) probe.child.kill("SIGKILL");
      await probe.exited;
    }
  });

  const start = (env: Readonly<Record<string, string>>, concurrency = 4): ProbeProcess => {
    const probe = startProbeProcess({ connectionString: bouncer.connectionString, schema: t.schema, concurrency, recordExecutions: true, env });
    running.push(probe);
    return probe;
  };

  const executions = async (): Promise<{ readonly executions: number; readonly jobs: number }> => {
    const { rows } = await sql<{ executions: number; jobs: number }>`
      SELECT count(*)::int AS executions, count(DISTINCT job_id)::int AS jobs FROM ${sql.id(t.schema, "executions")}`.execute(t.db);
    return rows[0]!;
  };

  /** Enqueues `total` probe jobs directly, drains them with 3 once-mode processes through the pooler, and checks each ran once. */
  async function drainThroughPooler(total: number, env: Readonly<Record<string, string>>): Promise<readonly ProbeProcess[]> {
    await t.store.enqueueMany(Array.from({ length: total }, (_, seq) => buildNewJob(ProbeJob, { seq })));
    const probes = [1, 2, 3].map(() => start(env));
    const ends = await Promise.all(probes.map((probe) => probe.exited));
    for (const end of ends) {
      expect(end.code, end.stderr).to.equal(0);
      expect(end.report?.report).to.include({ stoppedBecause: "drained", exitCode: 0 });
      expect(end.report?.report.totals.leaseLost).to.equal(0);
    }
    expect(ends.reduce((sum, end) => sum + (end.report?.report.totals.claimed ?? 0), 0)).to.equal(total);
    const { rows: states } = await sql<{ state: string; n: number }>`
      SELECT state, count(*)::int AS n FROM ${sql.id(t.schema, "all_jobs")} GROUP BY state`.execute(t.db);
    expect(states).to.deep.equal([{ state: "succeeded", n: total }]);
    expect(await executions(), "every handler ran exactly once").to.deep.equal({ executions: total, jobs: total });
    for (const probe of probes) {
      expect(warnings(probe, "STINT_NO_STATEMENT_TIMEOUT"), "the refused statement_timeout is said once").to.equal(1);
    }
    return probes;
  }

  it("auto: 3 processes drain 3,000 jobs, each once; named statements give way to unnamed ones, said once a process", async function () {
    this.timeout(120_000);
    const probes = await drainThroughPooler(3_000, {});
    expect(probes.map((probe) => warnings(probe, "STINT_UNNAMED_STATEMENTS"))).to.deep.equal([1, 1, 1]);
  });

  it("off: 3 processes drain 3,000 jobs, each once, with STINT_PREPARED_STATEMENTS=off and nothing to warn about statements", async function () {
    this.timeout(120_000);
    const probes = await drainThroughPooler(3_000, { STINT_PREPARED_STATEMENTS: "off" });
    expect(probes.map((probe) => warnings(probe, "STINT_UNNAMED_STATEMENTS"))).to.deep.equal([0, 0, 0]);
  });

  it("with STINT_SESSION_DATABASE_URL past the pooler: 3 processes drain 3,000 jobs, each once", async function () {
    this.timeout(120_000);
    await drainThroughPooler(3_000, { STINT_SESSION_DATABASE_URL: t.connectionString });
  });

  it("loop: processes poll for new jobs, elect one leader with a lease row, fire a schedule once per second and obey a pause, warning once that LISTEN cannot work", async function () {
    this.timeout(90_000);
    const env = { MODE: "loop", POLL_INTERVAL_MS: "200", PROBE_SCHEDULE_CRON: "* * * * * *", STINT_LOG_LEVEL: "info" };
    const probes = [start(env, 2), start(env, 2)];
    const jobs = sql.id(t.schema, "all_jobs");
    const fires = async (): Promise<{ readonly fires: number; readonly keys: number; readonly ran: number }> => {
      const { rows } = await sql<{ fires: number; keys: number; ran: number }>`
        SELECT count(*)::int AS fires, count(DISTINCT dedupe_key)::int AS keys, count(*) FILTER (WHERE state = 'succeeded')::int AS ran
          FROM ${jobs} WHERE dedupe_key LIKE 'schedule:probe-tick:%'`.execute(t.db);
      return rows[0]!;
    };
    await eventually(async () => (await fires()).ran >= 3, { timeoutMs: 30_000, what: "three scheduled fires to run" });
    const fired = await fires();
    expect(fired.keys, "each fire enqueued once").to.equal(fired.fires);
    const { rows: leases } = await sql<{ holders: number }>`SELECT count(*)::int AS holders FROM ${sql.id(t.schema, "leader_leases")}`.execute(t.db);
    expect(leases[0]?.holders, "the leader holds a lease row").to.equal(1);
    expect(probes.filter((probe) => probe.logLines.some((line) => line.includes("Became the maintenance leader")))).to.have.length(1);

    // No notification can wake them: a job enqueued now is found by polling.
    const [late] = await t.store.enqueueMany([buildNewJob(ProbeJob, { seq: 1_000_000 })]);
    await eventually(async () => (await t.store.getJob({ id: late!.id }))?.state === "succeeded", { timeoutMs: 10_000, what: "the late job to be polled for" });

    // A pause holds while the leader keeps firing: two more fires stay queued, then run on resume.
    await t.store.setQueueControls("probe", { paused: true });
    const before = (await fires()).fires;
    await eventually(async () => (await fires()).fires >= before + 2, { timeoutMs: 15_000, what: "two fires during the pause" });
    const { rows: held } = await sql<{ queued: number }>`
      SELECT count(*)::int AS queued FROM ${jobs} WHERE state = 'queued' AND dedupe_key LIKE 'schedule:probe-tick:%'`.execute(t.db);
    expect(held[0]?.queued, "fires enqueued during the pause wait").to.be.at.least(2);
    await t.store.setQueueControls("probe", { paused: false });
    await eventually(async () => (await fires()).ran >= before + 2, { timeoutMs: 15_000, what: "the held fires to run after resume" });

    for (const probe of probes) probe.child.kill("SIGTERM");
    const ends = await Promise.all(probes.map((probe) => probe.exited));
    expect(ends.map((end) => end.report?.report.exitCode)).to.deep.equal([0, 0]);
    expect(
      probes.map((probe) => warnings(probe, "STINT_NO_SESSIONS")),
      "LISTEN's absence is said once a process",
    ).to.deep.equal([1, 1]);
    const { executions: runs, jobs: distinct } = await executions();
    expect(runs, "no job ran twice").to.equal(distinct);
  });
});
