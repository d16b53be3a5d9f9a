import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob, firstRunAt } from "@stint/core/driver";
import { ProbeJob } from "../src/probe-job";
import type { ProbeProcess } from "../src/spawn-probe-workers";
import type { TestSchema } from "@stint/postgres-driver/testing";
import { useProbeProcesses } from "./probe-fixture";
import { eventually } from "@stint/core/testing";

describe("run modes in real processes", function () {
  this.timeout(60_000);
  const fixture = useProbeProcesses({ defaultConcurrency: 4 });
  const start = (env: Record<string, string> = {}, concurrency?: number): ProbeProcess => fixture.start(env, concurrency);
  async function enqueue(count: number): Promise<void> {
    await fixture.schema().store.enqueueMany(Array.from({ length: count }, (_, seq) => buildNewJob(ProbeJob, { seq })));
  }
  async function count(query: ReturnType<typeof sql<{ n: number }>>): Promise<number> {
    const { rows } = await query.execute(fixture.schema().db);
    return rows[0]?.n ?? 0;
  }
  const jobs = (where = sql`true`) => sql<{ n: number }>`select count(*)::int as n from ${sql.id(fixture.schema().schema, "all_jobs")} where ${where}`;
  const executions = () => sql<{ n: number }>`select count(*)::int as n from ${sql.id(fixture.schema().schema, "executions")}`;

  it("once mode drains the queue and exits 0 with a JSON report", async () => {
    await enqueue(300);
    const { code, report } = await start().exited;
    expect(code).to.equal(0);
    expect(report?.report).to.deep.include({ mode: "once", exitCode: 0, stoppedBecause: "drained" });
    expect(report?.report.totals.succeeded).to.equal(300);
    expect(await count(jobs(sql`state = 'succeeded'`))).to.equal(300);
  });

  it("on SIGTERM exits within the shutdown deadline and leaves no job running", async () => {
    await enqueue(8);
    const probe = start({ PROBE_SLEEP_MS: "30000", PROBE_PREFETCH: "4", SHUTDOWN_TIMEOUT_MS: "300" });
    // Four handlers run; the other four jobs wait in the worker's prefetch buffer, claimed and leased (also `running`).
    await eventually(() => count(jobs(sql`state = 'running'`)).then((n) => n === 8), { timeoutMs: 10_000, what: "eight jobs to be claimed" });
    const signalled = Date.now();
    probe.child.kill("SIGTERM");
    const { code, report } = await probe.exited;
    const exitedAfterMs = Date.now() - signalled;

    expect(code).to.equal(130);
    expect(exitedAfterMs, "exit well before the jobs' own 30 s").to.be.below(10_000);
    expect(report?.report.totals).to.include({ claimed: 8, released: 8 });
    expect(await count(jobs(sql`state = 'running'`)), "the only worker left nothing running").to.equal(0);
    expect(await count(jobs(sql`state = 'queued' and attempts = 1 and max_attempts = 6`))).to.equal(8);
  });

  it("two once processes started together run every job's handler once", async () => {
    await enqueue(2_000);
    const [first, second] = [start(), start()];
    const results = await Promise.all([first.exited, second.exited]);
    expect(results.map((result) => result.code)).to.deep.equal([0, 0]);
    expect(results.reduce((sum, result) => sum + (result.report?.report.totals.claimed ?? 0), 0)).to.equal(2_000);
    const { rows } = await sql<{ runs: number; jobs: number }>`
      select count(*)::int as runs, count(distinct job_id)::int as jobs from ${sql.id(fixture.schema().schema, "executions")}`.execute(fixture.schema().db);
    expect(rows[0]).to.deep.equal({ runs: 2_000, jobs: 2_000 });
  });

  it("five processes ticking schedules at once enqueue each fire once", async () => {
    // A yearly schedule last fired ten years ago, catching up its last five fires; it cannot come due again during the test.
    const cron = "0 0 1 1 *";
    const spec = {
      name: "probe-tick",
      queue: "probe",
      cron,
      timeZone: "UTC",
      payloadJson: '{"seq":0}',
      catchUp: 5,
      enabled: true,
      priority: 0,
      maxAttempts: 5,
      timeoutMs: null,
    };
    await fixture.schema().store.syncSchedules({ schedules: [spec], firstRunAt: (_spec, now) => new Date(now.getTime() - 10 * 365 * 86_400_000) });
    const probes = Array.from({ length: 5 }, () => start({ PROBE_SCHEDULE_CRON: cron, PROBE_SCHEDULE_CATCH_UP: "5" }));
    const results = await Promise.all(probes.map((probe) => probe.exited));
    expect(results.map((result) => result.code)).to.deep.equal([0, 0, 0, 0, 0]);
    const { rows } = await sql<{ key: string }>`
      select dedupe_key as key from ${sql.id(fixture.schema().schema, "all_jobs")} where dedupe_key like 'schedule:probe-tick:%' order by dedupe_key`.execute(
      fixture.schema().db,
    );
    expect(rows).to.have.length(5);
    expect(new Set(rows.map((row) => row.key)).size).to.equal(5);
    const [schedule] = await fixture.schema().store.listSchedules();
    expect(schedule?.nextRunAt.getTime(), "advanced past now").to.equal(firstRunAt(spec, schedule!.lastFiredAt!).getTime());
  });

  it("loop mode starts a new job on its notification, not its poll", async () => {
    const probe = start({ MODE: "loop", POLL_INTERVAL_MS: "600000" });
    await eventually(() => listening(fixture.schema()), { timeoutMs: 10_000, what: "a LISTEN connection" });
    // The idle poll is ten minutes: only the notification can start the job within the deadline.
    await enqueue(1);
    await eventually(() => count(executions()).then((n) => n === 1), { timeoutMs: 5_000, what: "the job to run" });
    probe.child.kill("SIGTERM");
    expect((await probe.exited).code).to.equal(0);
  });

  it("elects at most one maintenance leader and a new one when the leader is killed", async () => {
    const probes = [0, 1, 2].map(() => start({ MODE: "loop", STINT_LOG_LEVEL: "info" }, 1));
    // The leader lock's connections of these processes only (`stint:leader:<host>:<pid>:<token>`): other suites share the server.
    const leaderConnections = probes.map((probe) => `stint:leader:%:${probe.child.pid}:%`);
    let mostHolders = 0;
    const leaderPid = async (): Promise<number | undefined> => {
      const { rows } = await sql<{ pid: number; holders: number }>`
        select min(a.pid)::int as pid, count(*)::int as holders
          from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where l.locktype = 'advisory' and l.granted and a.datname = current_database()
           and a.application_name like any(${leaderConnections}::text[])`.execute(fixture.schema().db);
      mostHolders = Math.max(mostHolders, rows[0]?.holders ?? 0);
      return rows[0]?.holders === 1 ? rows[0].pid : undefined;
    };
    const leaderLine = (probe: ProbeProcess): boolean => probe.logLines.some((line) => line.includes("Became the maintenance leader"));
    const started = (probe: ProbeProcess): boolean => probe.logLines.some((line) => /Started worker \S+ for probe /.test(line));
    // Every process is up (and has tried to become leader), and the leader has said so, before the leader is judged:
    // its log line can reach this process after its lock shows in pg_locks.
    await eventually(async () => probes.every(started) && probes.some(leaderLine) && (await leaderPid()) !== undefined, {
      timeoutMs: 20_000,
      what: "all processes and a leader",
    });
    const first = probes.filter(leaderLine);
    expect(first, "leaders after start-up").to.have.length(1);
    const oldLeader = first[0]!;
    const oldLockHolder = await leaderPid();
    oldLeader.child.kill("SIGKILL");
    await oldLeader.exited;
    const next = await eventually(
      async () => {
        const holder = await leaderPid();
        const leaders = probes.filter((probe) => probe !== oldLeader && leaderLine(probe));
        return holder !== undefined && holder !== oldLockHolder && leaders.length > 0 ? leaders : undefined;
      },
      { timeoutMs: 30_000, what: "a new leader" },
    );
    expect(next, "leaders after the kill").to.have.length(1);
    expect(mostHolders, "holders of the leader lock at once, at any check").to.equal(1);
    for (const probe of probes) if (probe !== oldLeader) probe.child.kill("SIGTERM");
  });
});

async function listening(t: TestSchema): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
     where datname = current_database() and query ilike 'LISTEN%' and application_name like 'stint%'`.execute(t.db);
  return (rows[0]?.n ?? 0) > 0;
}
