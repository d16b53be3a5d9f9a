import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { defineJob, type JobEvent, type JobEventGap } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresJobEvents } from "../../src";
import { jobEventChannel } from "../../src/events/job-event-channel";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { RawListener } from "../support/raw-listener";

const run = promisify(execFile);
const Events = defineJob<{ n: number }>("events");

describe("PostgresJobEvents", () => {
  let test: TestSchema;
  let events: PostgresJobEvents;
  let raw: RawListener;
  let errors: Error[];

  beforeEach(async () => {
    test = await createTestSchema();
    errors = [];
    events = new PostgresJobEvents({
      connectionString: test.connectionString,
      schema: test.schema,
      applicationName: `${test.schema}:events`.slice(0, 63),
      reconnectMinDelayMs: 20,
      onError: (error) => errors.push(error),
    });
    raw = await RawListener.open(test.connectionString, jobEventChannel(test.schema));
  });
  afterEach(async () => {
    await raw.close();
    await events.close();
    await test.drop();
  });

  /** The notifications `work` sent on the job-event channel (see `RawListener.heardAfter`). */
  const heardAfter = (work: () => Promise<unknown>): Promise<string[]> => raw.heardAfter(test.db, work);

  /** Takes jobs through every state change, in one statement of each kind. */
  async function everyChange(count: number): Promise<void> {
    const ids = (await test.store.enqueueMany(Array.from({ length: count }, (_, n) => buildNewJob(Events, { n })))).map((result) => result.id);
    const claimed = await test.store.claimBatch({ queue: "events", workerId: "w1", limit: count, leaseMs: 60_000 });
    const [first, second, third] = claimed;
    await test.store.writeProgress({ workerId: "w1", job: { id: first!.id, attempt: first!.attempt }, progressJson: "1" });
    await test.store.completeJobs({ workerId: "w1", jobs: [{ id: first!.id, attempt: first!.attempt, resultJson: null, durationMs: 1 }] });
    await test.store.scheduleRetries({
      workerId: "w1",
      jobs: [{ id: second!.id, attempt: second!.attempt, delayMs: 60_000, failure: { message: "Error: no", code: "NO" }, spendAttempt: true }],
    });
    await test.store.markJobsDead({ workerId: "w1", jobs: [{ id: third!.id, attempt: third!.attempt, failure: { message: "Error: no", code: "NO" } }] });
    await test.store.cancelJob({ id: ids[3]! });
    await test.store.cancelJobs({ queue: "events", states: ["queued"], limit: 10 });
  }

  it("sends no notification while nobody subscribes, and none once the last subscription closed", async () => {
    expect(await heardAfter(() => everyChange(5))).to.deep.equal([]);
    const subscription = await events.subscribe({}, { onEvent: () => undefined });
    await subscription.close();
    expect(events.listening).to.equal(false);
    const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.id(test.schema, "job_event_listeners")}`.execute(test.db);
    expect(Number(rows.rows[0]!.n)).to.equal(0);
    expect(await heardAfter(() => everyChange(5))).to.deep.equal([]);
  });

  it("delivers every event type caused by another process, with the small fields", async () => {
    const seen: JobEvent[] = [];
    const gaps: JobEventGap[] = [];
    await events.subscribe({}, { onEvent: (event) => seen.push(event), onGap: (gap) => gaps.push(gap) });
    const script = path.join(__dirname, "job-events-producer.js");
    const { stdout } = await run(process.execPath, [script], { env: { ...process.env, DATABASE_URL: test.connectionString, STINT_TEST_SCHEMA: test.schema } });
    const ids = JSON.parse(stdout) as Record<"succeeds" | "fails" | "dies" | "cancelled" | "other", string>;
    await eventually(() => seen.some((event) => event.type === "cancelled"), { timeoutMs: 10_000, what: "the cancel event" });
    const of = (id: string): string[] => seen.filter((event) => event.jobId === id).map((event) => event.type);
    expect(of(ids.succeeds)).to.deep.equal(["enqueued", "started", "progress", "succeeded"]);
    expect(of(ids.fails)).to.deep.equal(["enqueued", "started", "failed"]);
    expect(of(ids.dies)).to.deep.equal(["enqueued", "started", "dead"]);
    expect(of(ids.cancelled)).to.deep.equal(["enqueued", "cancelled"]);
    expect(of(ids.other)).to.deep.equal(["enqueued"]);
    const progress = seen.find((event) => event.type === "progress");
    expect(progress).to.include({ queue: "events", attempt: 1 });
    expect(progress).to.have.deep.property("progress", { done: 1, of: 2 });
    expect(seen.find((event) => event.type === "failed")).to.include({ errorCode: "FLAKY", attempt: 1 });
    expect(seen.find((event) => event.type === "dead")).to.include({ errorCode: "BROKEN" });
    expect(seen.find((event) => event.type === "enqueued")).to.include({ attempt: 0, queue: "events" });
    expect(seen.every((event) => event.at instanceof Date && Math.abs(event.at.getTime() - Date.now()) < 60_000)).to.equal(true);
    expect(gaps).to.deep.equal([]);
  });

  it("sends only the queues and types somebody asked for, and delivers each subscription its own", async () => {
    const emails: JobEvent[] = [];
    const finishes: JobEvent[] = [];
    await events.subscribe({ queues: ["emails"] }, { onEvent: (event) => emails.push(event) });
    await events.subscribe({ queues: ["events"], types: ["succeeded", "dead"] }, { onEvent: (event) => finishes.push(event) });
    const sent = await heardAfter(() => everyChange(5));
    const kinds = sent.map((payload) => (JSON.parse(payload) as { k: string; q: string }).k);
    expect([...new Set(kinds)].sort()).to.deep.equal(["dead", "succeeded"]);
    expect(finishes.map((event) => event.type)).to.deep.equal(["succeeded", "dead"]);
    expect(emails).to.deep.equal([]);
  });

  it("tells the subscriber of a gap when its LISTEN connection is killed, and delivers events again after", async () => {
    const seen: JobEvent[] = [];
    const gaps: JobEventGap[] = [];
    await events.subscribe({ queues: ["events"] }, { onEvent: (event) => seen.push(event), onGap: (gap) => gaps.push(gap) });
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${`${test.schema}:events`.slice(0, 63)}`.execute(test.db);
    await eventually(() => gaps.some((gap) => gap.reason === "reconnected"), { timeoutMs: 10_000, what: "the reconnected gap" });
    expect(gaps.map((gap) => gap.reason)).to.deep.equal(["unavailable", "reconnected"]);
    const { id } = await test.store.enqueue(buildNewJob(Events, { n: 1 }));
    await eventually(() => seen.some((event) => event.jobId === id), { timeoutMs: 10_000, what: "the event after the reconnection" });
  });

  it("keeps every payload under 8000 bytes and summarises a 5,000-job statement as a gap", async () => {
    const seen: JobEvent[] = [];
    const gaps: JobEventGap[] = [];
    await events.subscribe({}, { onEvent: (event) => seen.push(event), onGap: (gap) => gaps.push(gap) });
    const enqueue = (count: number): Promise<unknown> => test.store.enqueueMany(Array.from({ length: count }, (_, n) => buildNewJob(Events, { n })));
    const listed = await heardAfter(() => enqueue(1_000));
    expect(listed.length).to.be.greaterThan(1);
    expect(listed.every((payload) => Buffer.byteLength(payload) < 8_000)).to.equal(true);
    await eventually(() => seen.length === 1_000, { timeoutMs: 10_000, what: "1,000 enqueued events" });
    const summarised = await heardAfter(() => enqueue(5_000));
    expect(summarised).to.have.length(1);
    await eventually(() => gaps.length === 1, { timeoutMs: 10_000, what: "the summary gap" });
    expect(gaps[0]).to.deep.equal({ reason: "summarised", type: "enqueued", queue: "events", count: 5_000 });
    expect(seen).to.have.length(1_000);
  });

  it("delivers an enqueue inside a transaction at its commit, and nothing for one rolled back", async () => {
    const seen: JobEvent[] = [];
    await events.subscribe({}, { onEvent: (event) => seen.push(event) });
    const rolledBack = await test.db
      .transaction()
      .execute(async (trx) => {
        await test.store.enqueue(buildNewJob(Events, { n: 1 }), trx);
        throw new Error("roll back");
      })
      .catch((error: unknown) => (error as Error).message);
    expect(rolledBack).to.equal("roll back");
    let committed = "";
    await test.db.transaction().execute(async (trx) => {
      committed = (await test.store.enqueue(buildNewJob(Events, { n: 2 }), trx)).id;
    });
    await eventually(() => seen.length > 0, { timeoutMs: 10_000, what: "the committed enqueue's event" });
    expect(seen.map((event) => event.jobId)).to.deep.equal([committed]);
  });
});
