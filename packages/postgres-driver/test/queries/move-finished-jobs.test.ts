import { expect } from "chai";
import { ConfigError } from "@stint/core";
import { sql } from "kysely";
import { moveFinishedJobs } from "../../src/queries/move-finished-jobs";
import { retryJob } from "../../src/queries/retry-job";
import { createTestSchema, type TestSchema } from "../../src/testing";

/** A row of `jobs` as a version before 15 left it: finished ones stayed there. */
interface LegacyRow {
  readonly state: "queued" | "running" | "failed" | "succeeded" | "dead" | "cancelled";
  /** When it finished, in days before now (finished rows only). */
  readonly finishedDaysAgo?: number;
}

describe("moveFinishedJobs", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 6 });
  });
  afterEach(() => test.drop());

  /** Inserts rows straight into `jobs`, in order, and returns their ids. */
  async function insertLegacy(rows: readonly LegacyRow[]): Promise<string[]> {
    const ids: string[] = [];
    for (const row of rows) {
      const running = row.state === "running";
      const finishedAt = row.finishedDaysAgo === undefined ? null : new Date(Date.now() - row.finishedDaysAgo * 86_400_000);
      const { rows: inserted } = await sql<{ id: string }>`INSERT INTO ${sql.id(test.schema, "jobs")}
          (queue, payload, state, attempts, locked_by, locked_until, started_at, finished_at, updated_at, result)
        VALUES ('mail', ${JSON.stringify({ n: ids.length })}, ${row.state}, ${running ? 1 : 0}, ${running ? "w1" : null},
                ${running ? new Date(Date.now() + 60_000) : null}, ${finishedAt}, ${finishedAt}, coalesce(${finishedAt}::timestamptz, now()),
                ${row.state === "succeeded" ? '{"ok":true}' : null})
        RETURNING id::text AS id`.execute(test.db);
      ids.push(inserted[0]!.id);
    }
    return ids;
  }

  /** Where each job is kept: `jobs`, or the partition of `finished_jobs` that holds it. */
  async function placesOf(ids: readonly string[]): Promise<Record<string, string>> {
    const { rows } = await sql<{ id: string; place: string }>`
      SELECT id::text AS id, 'jobs' AS place FROM ${sql.id(test.schema, "jobs")} WHERE id = ANY(${ids}::bigint[])
      UNION ALL SELECT id::text, tableoid::regclass::text FROM ${sql.id(test.schema, "finished_jobs")} WHERE id = ANY(${ids}::bigint[])`.execute(test.db);
    const places: Record<string, string> = {};
    for (const row of rows) {
      expect(places[row.id], `job ${row.id} is kept in one place`).to.equal(undefined);
      places[row.id] = row.place.replace(`${test.schema}.`, "");
    }
    return places;
  }

  /** Every job row, as JSON, by id: to compare a job's values before and after it moved. */
  async function snapshot(): Promise<Record<string, unknown>> {
    const { rows } = await sql<{ id: string; row: unknown }>`
      SELECT id::text AS id, to_jsonb(every) AS row FROM ${sql.id(test.schema, "all_jobs")} AS every`.execute(test.db);
    return Object.fromEntries(rows.map((row) => [row.id, row.row]));
  }

  /** `finished_jobs_YYYYMMDD` of the UTC day `days` days ago. */
  function partitionOf(daysAgo: number): string {
    return `finished_jobs_${new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10).replaceAll("-", "")}`;
  }

  it("moves finished rows oldest id first, up to the limit, and never an active one", async () => {
    const ids = await insertLegacy([
      { state: "succeeded", finishedDaysAgo: 0 },
      { state: "queued" },
      { state: "dead", finishedDaysAgo: 0 },
      { state: "running" },
      { state: "failed" },
      { state: "cancelled", finishedDaysAgo: 0 },
      { state: "succeeded", finishedDaysAgo: 0 },
    ]);
    const [succeeded, queued, dead, running, failed, cancelled, last] = ids as [string, string, string, string, string, string, string];
    const before = await snapshot();

    const first = await moveFinishedJobs(test.db, test.schema, { limit: 2 });
    expect(first).to.deep.equal({ moved: 2, lastId: dead });
    const second = await moveFinishedJobs(test.db, test.schema, { limit: 2, afterId: first.lastId });
    expect(second).to.deep.equal({ moved: 2, lastId: last });
    expect(await moveFinishedJobs(test.db, test.schema, { limit: 2, afterId: second.lastId })).to.deep.equal({ moved: 0, lastId: undefined });
    expect(await moveFinishedJobs(test.db, test.schema, { limit: 2 })).to.deep.equal({ moved: 0, lastId: undefined });

    const today = partitionOf(0);
    expect(await placesOf(ids)).to.deep.equal({
      [succeeded]: today,
      [queued]: "jobs",
      [dead]: today,
      [running]: "jobs",
      [failed]: "jobs",
      [cancelled]: today,
      [last]: today,
    });
    expect(await snapshot(), "every job keeps its id and every value").to.deep.equal(before);
  });

  it("creates the partition of each past day its rows finished on, so none lands in finished_jobs_kept", async () => {
    const ids = await insertLegacy([
      { state: "succeeded", finishedDaysAgo: 12 },
      { state: "dead", finishedDaysAgo: 9 },
      { state: "succeeded", finishedDaysAgo: 12.2 },
    ]);
    const partitions = async () =>
      (
        await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
          WHERE i.inhparent = ${`"${test.schema}".finished_jobs`}::regclass`.execute(test.db)
      ).rows.map((row) => row.name);
    expect(await partitions()).to.not.include.members([partitionOf(12), partitionOf(9)]);

    expect((await moveFinishedJobs(test.db, test.schema, { limit: 10 })).moved).to.equal(3);

    const places = await placesOf(ids);
    expect(Object.values(places)).to.deep.equal([partitionOf(12), partitionOf(9), partitionOf(12.2)]);
    expect(await partitions(), "no partition for the days in between").to.not.include(partitionOf(10));
  });

  it("skips a row another transaction holds locked, and moves it on a later call", async () => {
    const [held, free] = (await insertLegacy([
      { state: "dead", finishedDaysAgo: 0 },
      { state: "dead", finishedDaysAgo: 0 },
    ])) as [string, string];
    const jobs = sql.id(test.schema, "jobs");

    const moved = await test.db.transaction().execute(async (holder) => {
      await sql`SELECT 1 FROM ${jobs} WHERE id = ${held}::bigint FOR UPDATE`.execute(holder);
      return moveFinishedJobs(test.db, test.schema, { limit: 10 });
    });

    expect(moved).to.deep.equal({ moved: 1, lastId: free });
    expect((await placesOf([held]))[held]).to.equal("jobs");
    expect((await moveFinishedJobs(test.db, test.schema, { limit: 10 })).moved).to.equal(1);
    expect((await placesOf([held]))[held]).to.equal(partitionOf(0));
  });

  it("never moves a row that an operator retries at that moment", async () => {
    const [retried, other] = (await insertLegacy([
      { state: "dead", finishedDaysAgo: 1 },
      { state: "cancelled", finishedDaysAgo: 1 },
    ])) as [string, string];

    const moved = await test.db.transaction().execute(async (operator) => {
      expect(await retryJob(operator, test.schema, { id: retried })).to.equal(true);
      return moveFinishedJobs(test.db, test.schema, { limit: 10 });
    });

    expect(moved.moved).to.equal(1);
    expect(await moveFinishedJobs(test.db, test.schema, { limit: 10 })).to.deep.equal({ moved: 0, lastId: undefined });
    const { rows } = await sql<{ state: string }>`SELECT state FROM ${sql.id(test.schema, "jobs")} WHERE id = ${retried}::bigint`.execute(test.db);
    expect(rows).to.deep.equal([{ state: "queued" }]);
    expect((await placesOf([other]))[other]).to.equal(partitionOf(1));
  });

  it("moves a finished row without finished_at (given its updated_at) or finished at an infinite time", async () => {
    const [unset, infinite] = (await insertLegacy([{ state: "cancelled" }, { state: "succeeded", finishedDaysAgo: 0 }])) as [string, string];
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET finished_at = 'infinity' WHERE id = ${infinite}::bigint`.execute(test.db);

    expect((await moveFinishedJobs(test.db, test.schema, { limit: 10 })).moved).to.equal(2);

    const { rows } = await sql<{ id: string; same: boolean }>`SELECT id::text AS id, finished_at = updated_at AS same
      FROM ${sql.id(test.schema, "finished_jobs")} WHERE id = ${unset}::bigint`.execute(test.db);
    expect(rows).to.deep.equal([{ id: unset, same: true }]);
    expect(await placesOf([unset, infinite])).to.deep.equal({ [unset]: partitionOf(0), [infinite]: "finished_jobs_kept" });
  });

  it("is a store method that returns how many it moved, and refuses a limit out of range before any SQL", async () => {
    await insertLegacy([{ state: "succeeded", finishedDaysAgo: 0 }, { state: "queued" }, { state: "succeeded", finishedDaysAgo: 0 }]);

    expect(await test.store.moveFinishedJobs({ limit: 1 })).to.equal(1);
    expect(await test.store.moveFinishedJobs({ limit: 5 })).to.equal(1);
    expect(await test.store.moveFinishedJobs({ limit: 5 })).to.equal(0);
    for (const limit of [0, 1.5, 100_001]) {
      const refused = await test.store.moveFinishedJobs({ limit }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, `limit ${limit}`).to.be.instanceOf(ConfigError).and.to.have.property("message").that.contains("limit");
    }
  });
});
