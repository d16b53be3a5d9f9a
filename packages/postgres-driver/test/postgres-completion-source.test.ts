import { ConfigError, defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { PostgresCompletionSource } from "../src";
import { completionChannel } from "../src/completion-channel";
import { moveToFinished } from "../src/queries/finished-jobs";
import { createTestSchema, type TestSchema } from "../src/testing";
import { eventually, rejectionOf } from "@stint/core/testing";
import { testCompletions, type TestCompletions } from "./support/test-completions";

const Task = defineJob<{ n: number }>("task");

describe("PostgresCompletionSource", () => {
  let test: TestSchema;
  let completions: PostgresCompletionSource;
  let applicationName: string;
  let listener: pg.Client;
  let heard: string[];
  let helpers: TestCompletions;

  beforeEach(async () => {
    test = await createTestSchema();
    helpers = testCompletions(test);
    ({ source: completions, applicationName } = helpers);
    heard = [];
    listener = new pg.Client({ connectionString: test.connectionString });
    await listener.connect();
    listener.on("notification", (message) => heard.push(message.payload ?? ""));
    await listener.query(`LISTEN ${listener.escapeIdentifier(completionChannel(test.schema))}`);
  });
  afterEach(async () => {
    await listener.end();
    await completions.close();
    await test.drop();
  });

  async function enqueue(count: number): Promise<string[]> {
    const jobs = Array.from({ length: count }, (_, n) => buildNewJob(Task, { n }));
    return (await test.store.enqueueMany(jobs)).map((result) => result.id);
  }

  /** Claims the jobs of the task queue and completes them in one statement. */
  async function completeAll(limit: number): Promise<readonly string[]> {
    const jobs = await test.store.claimBatch({ queue: "task", workerId: "w1", limit, leaseMs: 60_000 });
    return test.store.completeJobs({ workerId: "w1", jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })) });
  }

  /** Notifications arrive in commit order: once a sentinel sent after `work` is heard, every notification of `work` has been too. */
  async function heardAfter(work: () => Promise<unknown>): Promise<string[]> {
    const before = heard.length;
    await work();
    await sql`SELECT pg_notify(${completionChannel(test.schema)}, 'sentinel')`.execute(test.db);
    await eventually(() => heard.includes("sentinel"), { timeoutMs: 10_000, what: "the sentinel notification" });
    const sent = heard.slice(before, heard.indexOf("sentinel"));
    heard = [];
    return sent;
  }

  const waiterRows = (): Promise<number> => helpers.registeredWaits();

  it("sends no notification for jobs nobody waits for", async () => {
    await enqueue(50);
    expect(await heardAfter(() => completeAll(50))).to.deep.equal([]);
  });

  it("names the waited-for jobs a completion finished, in one notification of at most 300 ids, in the same transaction", async () => {
    const ids = await enqueue(700);
    const watches = await Promise.all(ids.map((id) => completions.watch(id, () => undefined)));
    expect(await waiterRows()).to.equal(700);
    const sent = await heardAfter(() => completeAll(700));
    expect(sent).to.have.length(3);
    expect(sent.every((payload) => Buffer.byteLength(payload) < 8_000)).to.equal(true);
    expect(sent.flatMap((payload) => payload.split(",")).sort()).to.deep.equal([...ids].sort());
    await Promise.all(watches.map((watch) => watch.close()));
    expect(await waiterRows()).to.equal(0);
  });

  it("hints the watchers of a job when a statement finishes it (dead, cancelled, rescued), and only them", async () => {
    const [dead, cancelled, other] = await enqueue(3);
    const hinted: string[] = [];
    for (const id of [dead!, cancelled!]) await completions.watch(id, () => hinted.push(id));
    const jobs = await test.store.claimBatch({ queue: "task", workerId: "w1", limit: 3, leaseMs: 60_000 });
    const deadJob = jobs.find((job) => job.id === dead)!;
    await test.store.markJobsDead({ workerId: "w1", jobs: [{ id: dead!, attempt: deadJob.attempt, failure: { message: "Error: no", code: null } }] });
    await eventually(() => hinted.includes(dead!), { timeoutMs: 10_000, what: "the hint for the dead job" });
    await test.store.cancelJob({ id: cancelled! });
    await eventually(() => hinted.includes(cancelled!), { timeoutMs: 10_000, what: "the hint for the cancelled job" });
    expect(hinted).to.deep.equal([dead, cancelled]);
    expect(other).to.be.a("string");
  });

  it("hints the watchers of a job whose expired lease the rescue gives up on", async () => {
    const [id] = await enqueue(1);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET max_attempts = 1`.execute(test.db);
    const hinted: string[] = [];
    await completions.watch(id!, () => hinted.push(id!));
    await test.store.claimBatch({ queue: "task", workerId: "w1", limit: 1, leaseMs: 1 });
    await eventually(async () => (await test.store.rescueExpiredLeases({ limit: 10 })).dead === 1, { timeoutMs: 10_000, what: "the rescue" });
    await eventually(() => hinted.length > 0, { timeoutMs: 10_000, what: "the hint" });
  });

  // A finish in flight that ran its waiter check before the registration: it announces nothing.
  const finishesInFlight: [string, (id: string) => { sql: string; parameters: readonly unknown[] }][] = [
    // This version's: the row leaves jobs for finished_jobs in one statement.
    [
      "moving the job to finished_jobs",
      (id) =>
        sql`WITH removed AS (DELETE FROM ${sql.id(test.schema, "jobs")} WHERE id = ${id}::bigint RETURNING *),
             moved AS (${moveToFinished(test.schema, "removed", { state: sql`'succeeded'`, finished_at: sql`now()` })})
             SELECT 1`.compile(test.db),
    ],
    // A worker of a version before 15, during a rolling upgrade: the row is finished in place.
    [
      "finishing the job in place",
      (id) => sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now() WHERE id = ${id}::bigint`.compile(test.db),
    ],
  ];
  for (const [how, finish] of finishesInFlight) {
    it(`looks again after registering while a transaction is ${how}, for as long as it holds the row, and hints once the finish committed`, async () => {
      const [id] = await enqueue(1);
      const holder = new pg.Client({ connectionString: test.connectionString });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        const statement = finish(id!);
        await holder.query(statement.sql, [...statement.parameters]);
        let hints = 0;
        await completions.watch(id!, () => (hints += 1));
        const registeredAt = (await sql<{ at: string }>`SELECT clock_timestamp()::text AS at`.execute(test.db)).rows[0]!.at;
        // The source's connection runs nothing else here, so a later query_start is a look at the held row;
        // 3 s is past the 2.5 s that 20 ms doubling to 1.28 s adds up to: the looks go on while the row is held.
        const lookedLate = async (): Promise<boolean> =>
          (
            await sql<{ looked: boolean | null }>`SELECT bool_or(query_start > ${registeredAt}::timestamptz + interval '3 s') AS looked
              FROM pg_stat_activity WHERE application_name = ${applicationName}`.execute(test.db)
          ).rows[0]?.looked === true;
        await eventually(lookedLate, { timeoutMs: 10_000, what: "a look at the held row 3 s after registering" });
        expect(hints, "hints while the row is held").to.equal(0);
        await holder.query("COMMIT");
        await eventually(() => hints > 0, { timeoutMs: 5_000, what: "a hint after the finish committed" });
        expect((await test.store.getJob({ id: id! }))?.state).to.equal("succeeded");
      } finally {
        await holder.end();
      }
    });
  }

  it("opens one connection for all its watches, registers them again after it is terminated, and hints every watcher", async () => {
    const ids = await enqueue(3);
    const hinted = new Set<string>();
    const watches = await Promise.all(ids.map((id) => completions.watch(id, () => hinted.add(id))));
    const pids = async (): Promise<number[]> =>
      (await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${applicationName}`.execute(test.db)).rows.map((row) => row.pid);
    const [first] = await pids();
    expect(await pids()).to.have.length(1);
    await sql`DELETE FROM ${sql.id(test.schema, "job_waiters")}`.execute(test.db); // as a crash empties the UNLOGGED table
    await sql`SELECT pg_terminate_backend(${first!}::int)`.execute(test.db);
    await eventually(() => hinted.size === 3, { timeoutMs: 10_000, what: "every watcher to be hinted after the reconnection" });
    await eventually(async () => (await waiterRows()) === 3, { timeoutMs: 10_000, what: "the registrations to be made again" });
    expect(await pids())
      .to.have.length(1)
      .and.not.include(first);
    await Promise.all(watches.map((watch) => watch.close()));
    await eventually(async () => (await pids()).length === 0, { timeoutMs: 10_000, what: "the connection to close with the last watch" });
  });

  it("refuses bad watches and options, and watches after close", async () => {
    expect(await rejectionOf(completions.watch("x", () => undefined)))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "jobId");
    expect(await rejectionOf(completions.watch("1", "no" as never)))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "onHint");
    expect(() => new PostgresCompletionSource({ connectionString: "" })).to.throw(ConfigError, "connectionString");
    expect(() => new PostgresCompletionSource({ connectionString: "postgres://x", pollMs: 5 } as never)).to.throw(ConfigError, "completionSource.pollMs");
    await completions.close();
    expect(await rejectionOf(completions.watch("1", () => undefined))).to.be.instanceOf(ConfigError);
  });
});
