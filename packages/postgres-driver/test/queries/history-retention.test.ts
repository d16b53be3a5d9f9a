import { RetentionPruner } from "@stint/core/driver";
import { eventually, newJob } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { HISTORY_LOCK_TIMEOUT_MS, isHistoryHeld } from "../../src/queries/history-lock";
import { MAX_KEPT_PER_DROP } from "../../src/queries/retention-plan";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { finishJobs, HistoryDays } from "./history-days";

const DAY_MS = 86_400_000;

describe("retention of the partitioned history", () => {
  let test: TestSchema;
  let days: HistoryDays;

  beforeEach(async () => {
    test = await createTestSchema();
    days = new HistoryDays(test);
    await days.make(12, 1);
  });
  afterEach(async () => {
    await test.drop();
  });

  const deleteOld = (states: ("succeeded" | "dead" | "cancelled")[], olderThanDays: number, limit = 1_000) =>
    test.store.deleteFinishedBefore({ states, olderThanMs: olderThanDays * DAY_MS, limit });

  it("drops a day partition past its time whole, with more than limit jobs in one call, and keeps younger rows", async () => {
    const old = await finishJobs(test.store, "mail", "succeeded", 5);
    const young = await finishJobs(test.store, "mail", "succeeded", 2);
    await days.backdate(old, 10);
    await days.backdate(young, 3);
    const oldDay = await days.nameOf(10);
    expect(await days.partitionOf(old[0]!)).to.equal(oldDay);

    expect(await deleteOld(["succeeded", "cancelled"], 7, 2)).to.equal(5);
    expect(await days.exists(oldDay)).to.equal(false);
    for (const id of old) expect(await test.store.getJob({ id })).to.equal(undefined);
    for (const id of young) expect(await test.store.getJob({ id })).to.include({ state: "succeeded" });
    expect(await days.exists(await days.nameOf(3))).to.equal(true);
    expect(await deleteOld(["succeeded", "cancelled"], 7, 2)).to.equal(0);
  });

  it("keeps dead jobs younger than their own retention through the drop, in finished_jobs_kept, and deletes them later", async () => {
    const succeeded = await finishJobs(test.store, "mail", "succeeded", 3);
    const [dead] = await finishJobs(test.store, "mail", "dead", 1);
    await days.backdate([...succeeded, dead!], 10);
    expect(await days.attemptRows(dead!)).to.equal(1);

    expect(await deleteOld(["succeeded", "cancelled"], 7)).to.equal(3);
    expect(await days.exists(await days.nameOf(10))).to.equal(false);
    expect(await test.store.getJob({ id: dead! })).to.include({ state: "dead", attempts: 1 });
    expect(await days.partitionOf(dead!)).to.equal("finished_jobs_kept");
    expect(await days.attemptRows(dead!)).to.equal(1, "the kept job keeps its attempt history");

    expect(await deleteOld(["dead"], 30)).to.equal(0);
    expect(await test.store.getJob({ id: dead! })).to.include({ state: "dead" });
    expect(await deleteOld(["dead"], 9)).to.equal(1);
    expect(await test.store.getJob({ id: dead! })).to.equal(undefined);
    expect(await days.attemptRows(dead!)).to.equal(0);
  });

  it("deletes the attempt history and the leftover waiter rows of the jobs a dropped partition held", async () => {
    const retried = await finishJobs(test.store, "mail", "retried", 2);
    const [cancelled] = await finishJobs(test.store, "mail", "cancelled", 1);
    const [untouched] = await finishJobs(test.store, "mail", "retried", 1);
    await days.backdate([...retried, cancelled!], 10);
    await sql`INSERT INTO ${sql.id(test.schema, "job_waiters")} (job_id, waiter) VALUES (${retried[0]!}::bigint, 'gone-process')`.execute(test.db);
    for (const id of retried) expect(await days.attemptRows(id)).to.equal(1);

    expect(await deleteOld(["succeeded", "cancelled"], 7)).to.equal(3);
    for (const id of retried) expect(await days.attemptRows(id)).to.equal(0);
    expect(await days.attemptRows(untouched!)).to.equal(1, "a younger job's history stays");
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.id(test.schema, "job_waiters")}`.execute(test.db);
    expect(Number(rows[0]!.n)).to.equal(0);
  });

  it("deletes the ctx.log lines of the jobs a dropped partition held, first attempts that succeeded included, and only theirs", async () => {
    const old = await finishJobs(test.store, "mail", "succeeded", 3);
    const [keptDead] = await finishJobs(test.store, "mail", "dead", 1);
    const [young] = await finishJobs(test.store, "mail", "succeeded", 1);
    await days.backdate([...old, keptDead!], 10);
    const logged = [...old, keptDead!, young!];
    for (const id of logged) {
      await sql`INSERT INTO ${sql.id(test.schema, "job_logs")} (job_id, attempt, lines) VALUES (${id}::bigint, 1, '[{"at":"2026-01-01T00:00:00Z","message":"hi"}]')`.execute(
        test.db,
      );
    }

    expect(await deleteOld(["succeeded", "cancelled"], 7, 2)).to.equal(3);
    expect(await days.exists(await days.nameOf(10))).to.equal(false);
    const { rows } = await sql<{ job_id: string }>`SELECT job_id FROM ${sql.id(test.schema, "job_logs")} ORDER BY job_id`.execute(test.db);
    expect(rows.map((row) => String(row.job_id))).to.deep.equal([keptDead!, young!]);
  });

  it("prunes finished_jobs_kept and the finished rows still in jobs row by row, at most limit per call", async () => {
    const [legacy1, legacy2] = await test.store.enqueueMany([newJob("legacy", { n: 1 }), newJob("legacy", { n: 2 })]);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now() - interval '20 days'
      WHERE id IN (${legacy1!.id}::bigint, ${legacy2!.id}::bigint)`.execute(test.db);
    const kept = await finishJobs(test.store, "mail", "succeeded", 2);
    await days.backdate(kept, 40);
    expect(await days.partitionOf(kept[0]!)).to.equal("finished_jobs_kept", "a day without a partition");

    expect(await deleteOld(["succeeded"], 7, 3)).to.equal(3);
    expect(await deleteOld(["succeeded"], 7, 3)).to.equal(1);
    for (const id of [legacy1!.id, legacy2!.id, ...kept]) expect(await test.store.getJob({ id })).to.equal(undefined);
  });

  it("keeps a job past a retention of a day or more until its whole day is past it, and deletes it at once for a shorter one", async () => {
    const [job] = await finishJobs(test.store, "mail", "succeeded", 1);
    // Halfway between the start of its UTC day and the cutoff: past the cutoff, on a day that is not.
    await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at =
        date_trunc('day', now() - interval '7 days', 'UTC') + ((now() - interval '7 days') - date_trunc('day', now() - interval '7 days', 'UTC')) / 2
      WHERE id = ${job!}::bigint`.execute(test.db);
    expect(await deleteOld(["succeeded"], 7)).to.equal(0);
    expect(await test.store.getJob({ id: job! })).to.include({ state: "succeeded" });

    const [today] = await finishJobs(test.store, "mail", "succeeded", 1);
    expect(await test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 0, limit: 100 })).to.equal(2);
    expect(await test.store.getJob({ id: today! })).to.equal(undefined);
  });

  it("never drops a partition for a pass limited to some queues: deletes that queue's jobs row by row", async () => {
    const mail = await finishJobs(test.store, "mail", "succeeded", 2);
    const other = await finishJobs(test.store, "other", "succeeded", 1);
    await days.backdate([...mail, ...other], 10);
    expect(await test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 7 * DAY_MS, limit: 100, queues: ["mail"] })).to.equal(2);
    expect(await days.exists(await days.nameOf(10))).to.equal(true);
    expect(await test.store.getJob({ id: other[0]! })).to.include({ state: "succeeded" });
  });

  it(`deletes row by row, and keeps the partition, when it holds more than ${MAX_KEPT_PER_DROP} jobs to keep`, async () => {
    const succeeded = await finishJobs(test.store, "mail", "succeeded", 3);
    await days.backdate(succeeded, 10);
    const finished = sql.id(test.schema, "finished_jobs");
    await sql`INSERT INTO ${finished} (id, queue, payload, attempts, state, finished_at)
      SELECT 1000000 + n, 'mail', '{}', 1, 'dead', now() - interval '10 days'
        FROM generate_series(1, ${MAX_KEPT_PER_DROP + 1}::integer) AS n`.execute(test.db);
    expect(await deleteOld(["succeeded", "cancelled"], 7)).to.equal(3);
    expect(await days.exists(await days.nameOf(10))).to.equal(true);
    expect(await test.store.getJob({ id: "1000001" })).to.include({ state: "dead" });
    const half = MAX_KEPT_PER_DROP / 2;
    expect(await deleteOld(["dead"], 7, half)).to.equal(half);
    expect(await deleteOld(["dead"], 7, half)).to.equal(MAX_KEPT_PER_DROP + 1 - half, "few enough now: the rest go with the table");
    expect(await days.exists(await days.nameOf(10))).to.equal(false);
  });

  it("gives up the pass when the history is locked for longer than the lock timeout, and drops the partition on the next one", async () => {
    const old = await finishJobs(test.store, "mail", "succeeded", 2);
    await days.backdate(old, 10);
    const oldDay = await days.nameOf(10);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = test.db.transaction().execute(async (trx) => {
      await sql`SELECT count(*) FROM ${sql.id(test.schema, "finished_jobs")}`.execute(trx);
      locked();
      await held;
    });
    await isLocked;
    const started = Date.now();
    expect(await deleteOld(["succeeded", "cancelled"], 7, 1)).to.equal(0);
    expect(Date.now() - started).to.be.within(HISTORY_LOCK_TIMEOUT_MS - 50, HISTORY_LOCK_TIMEOUT_MS * 5);
    expect(await days.exists(oldDay)).to.equal(true);
    for (const id of old) expect(await test.store.getJob({ id })).to.include({ state: "succeeded" });
    release();
    await holder;
    expect(await deleteOld(["succeeded", "cancelled"], 7, 1)).to.equal(2);
    expect(await days.exists(oldDay)).to.equal(false);
  });

  it("leaves the partitions for the next pass, without waiting, while a transaction has held the history for long", async () => {
    const old = await finishJobs(test.store, "mail", "succeeded", 2);
    await days.backdate(old, 10);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holder = test.db.transaction().execute(async (trx) => {
      await sql`SELECT count(*) FROM ${sql.id(test.schema, "finished_jobs")}`.execute(trx);
      await held;
    });
    try {
      await eventually(() => isHistoryHeld(test.db, test.schema), { timeoutMs: 10_000, what: "the history held for longer than the lock timeout" });
      const started = Date.now();
      expect(await deleteOld(["succeeded", "cancelled"], 7, 1)).to.equal(0);
      expect(Date.now() - started).to.be.below(HISTORY_LOCK_TIMEOUT_MS);
      expect(await days.exists(await days.nameOf(10))).to.equal(true);
    } finally {
      release();
      await holder;
    }
    expect(await deleteOld(["succeeded", "cancelled"], 7, 1)).to.equal(2);
  });

  it("refuses to detach today's partition, or to drop a day that is still attached", async () => {
    const refusal = async (statement: ReturnType<typeof sql>): Promise<unknown> => {
      try {
        await statement.execute(test.db);
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    };
    const today = sql`(now() AT TIME ZONE 'UTC')::date`;
    expect(await refusal(sql`SELECT ${sql.id(test.schema, "detach_history_partition")}(${today}, ARRAY['succeeded'])`)).to.include({ code: "22023" });
    expect(await refusal(sql`SELECT ${sql.id(test.schema, "drop_detached_history")}(${today} - 3)`)).to.include({ code: "55006" });
    expect(await days.exists(await days.nameOf(0))).to.equal(true);
    expect(await days.exists(await days.nameOf(3))).to.equal(true);
  });

  it("drops a day a stopped pass left detached", async () => {
    const old = await finishJobs(test.store, "mail", "succeeded", 2);
    await days.backdate(old, 10);
    const oldDay = await days.nameOf(10);
    await sql`ALTER TABLE ${sql.id(test.schema, "finished_jobs")} DETACH PARTITION ${sql.id(test.schema, oldDay)}`.execute(test.db);
    expect(await days.exists(oldDay)).to.equal(true);
    expect(await deleteOld(["succeeded", "cancelled"], 30)).to.equal(0);
    expect(await days.exists(oldDay)).to.equal(false);
  });

  it("keeps the day partitions a week ahead: the store's upkeep and the retention pass make the missing ones", async () => {
    const ahead = await days.nameOf(-7);
    await sql`DROP TABLE ${sql.id(test.schema, ahead)}`.execute(test.db);
    expect(await test.store.ensureHistoryPartitions()).to.equal(1);
    expect(await days.exists(ahead)).to.equal(true);
    expect(await test.store.ensureHistoryPartitions()).to.equal(0);

    await sql`DROP TABLE ${sql.id(test.schema, ahead)}`.execute(test.db);
    const report = await new RetentionPruner(test.store).runOnce();
    expect(report).to.match(/; made 1 history partition$/);
    expect(await days.exists(ahead)).to.equal(true);
  });

  it("runs a retention pass that drops old days whole and keeps what is younger", async () => {
    const old = await finishJobs(test.store, "mail", "succeeded", 4);
    const [deadOld] = await finishJobs(test.store, "mail", "dead", 1);
    const young = await finishJobs(test.store, "mail", "succeeded", 1);
    await days.backdate([...old, deadOld!], 11);
    await days.backdate(young, 2);
    const report = await new RetentionPruner(test.store, { batchSize: 2 }).runOnce();
    expect(report).to.match(/^pruned 4 succeeded\/cancelled and 0 dead jobs/);
    expect(await days.exists(await days.nameOf(11))).to.equal(false);
    expect(await test.store.getJob({ id: deadOld! })).to.include({ state: "dead" });
    expect(await test.store.getJob({ id: young[0]! })).to.include({ state: "succeeded" });
  });
});
