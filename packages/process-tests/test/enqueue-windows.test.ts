import { spawn } from "node:child_process";
import { join } from "node:path";
import { ErrorCode, type EnqueueResult } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { ProbeJob } from "../src/probe-job";
import { useProbeProcesses } from "./probe-fixture";

describe("unique windows, expiry and follow-up runs in real processes", function () {
  this.timeout(60_000);
  const fixture = useProbeProcesses({ defaultConcurrency: 4 });

  /** Starts `count` producer processes at once, each enqueueing one probe job (`seq` = its index) with `options`. */
  async function enqueuers(count: number, options: object): Promise<EnqueueResult[]> {
    const { connectionString, schema } = fixture.schema();
    const script = join(__dirname, "../src/probe-enqueue-process.js");
    return Promise.all(
      Array.from({ length: count }, (_, seq) => {
        const env = { ...process.env, DATABASE_URL: connectionString, STINT_SCHEMA: schema, PROBE_SEQ: String(seq), ENQUEUE_OPTIONS: JSON.stringify(options) };
        const child = spawn(process.execPath, [script], { env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
        return new Promise<EnqueueResult>((resolve, reject) =>
          child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as EnqueueResult) : reject(new Error(`enqueuer ${seq} exited ${code}: ${err}`)))),
        );
      }),
    );
  }
  const rows = async () =>
    (
      await sql<{ id: string; state: string; dedupe_key: string | null; seq: number; error_code: string | null }>`
        SELECT id::text, state, dedupe_key, (payload->>'seq')::int AS seq, error_code FROM ${sql.id(fixture.schema().schema, "all_jobs")} ORDER BY id`.execute(
        fixture.schema().db,
      )
    ).rows;
  const runs = async () =>
    (
      await sql<{ job_id: string }>`SELECT job_id::text FROM ${sql.id(fixture.schema().schema, "executions")} ORDER BY job_id`.execute(fixture.schema().db)
    ).rows.map((row) => row.job_id);

  it("8 producer processes of one unique window enqueue one job; once it has run, a ninth gets that job", async () => {
    const results = await enqueuers(8, { unique: { key: "digest:7", forMs: 3_600_000 } });
    const ids = new Set(results.map((result) => result.id));
    expect(ids.size).to.equal(1);
    expect(results.filter((result) => !result.duplicate)).to.have.length(1);
    expect((await fixture.start().exited).code).to.equal(0);
    const [id] = [...ids];
    expect(await runs()).to.deep.equal([id]);
    expect(await enqueuers(1, { unique: { key: "digest:7", forMs: 3_600_000 } })).to.deep.equal([{ id, duplicate: true }]);
    expect((await rows()).map((row) => row.state)).to.deep.equal(["succeeded"]);
  });

  it("two worker processes never run a job past its deadline; once mode cancels it as expired", async () => {
    const store = fixture.schema().store;
    await store.enqueueMany(Array.from({ length: 40 }, (_, seq) => buildNewJob(ProbeJob, { seq }, { startBy: new Date("2001-01-01T00:00:00Z") })));
    const open = await store.enqueueMany(Array.from({ length: 40 }, (_, seq) => buildNewJob(ProbeJob, { seq: 100 + seq }, { expireInMs: 3_600_000 })));
    const exits = await Promise.all([fixture.start().exited, fixture.start().exited]);
    expect(exits.map((exit) => exit.code)).to.deep.equal([0, 0]);
    expect(await runs()).to.deep.equal(open.map((result) => result.id).sort());
    const all = await rows();
    expect(all.filter((row) => row.state === "cancelled").every((row) => row.error_code === ErrorCode.Expired && row.seq < 100)).to.equal(true);
    expect(all.filter((row) => row.state === "cancelled")).to.have.length(40);
  });

  it("8 producer processes replacing while the holder runs in a worker process leave exactly one follow-up, which runs after", async () => {
    const holder = await fixture.schema().store.enqueue(buildNewJob(ProbeJob, { seq: -1 }, { dedupeKey: "doc:1" }));
    // The holder runs long enough for 8 producer processes to start and enqueue on a loaded machine (their start-up alone
    // has taken over 3 s): were it to finish first, a later enqueue would rightly make a second follow-up.
    const worker = fixture.start({ MODE: "loop", PROBE_SLEEP_MS: "12000", POLL_INTERVAL_MS: "100" }, 1);
    await eventually(async () => (await runs()).includes(holder.id), { timeoutMs: 20_000, what: "the holder to start" });
    const results = await enqueuers(8, { dedupeKey: "doc:1", dedupe: "replace" });
    const followUps = new Set(results.map((result) => result.id));
    expect(followUps.size, "every enqueue answered with the one follow-up").to.equal(1);
    expect(followUps.has(holder.id)).to.equal(false);
    expect(results.filter((result) => !result.duplicate)).to.have.length(1);
    const [followUp] = [...followUps];
    await eventually(async () => (await rows()).filter((row) => row.state === "succeeded").length === 2, { timeoutMs: 60_000, what: "both jobs to succeed" });
    worker.child.kill("SIGTERM");
    await worker.exited;
    expect(await runs()).to.deep.equal([holder.id, followUp].sort());
    expect((await rows()).map((row) => [row.id, row.dedupe_key])).to.deep.equal([
      [holder.id, null],
      [followUp, "doc:1"],
    ]);
  });
});
