import { expect } from "chai";
import { sql, type RawBuilder } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeSucceededJobs } from "../helpers/job-states";

/** What `stint prune --dry-run --json` and `stint prune --json` print (the fields compared). */
interface Counts {
  readonly succeeded: number;
  readonly dead: number;
  readonly cancelled: number;
}

const QUEUES = ["mail", "audit", "thumbs", "push"] as const;
const STATES = ["succeeded", "dead", "cancelled"] as const;
/** Days ago a job finished at; the `mid` ones fall in a day partition not wholly past a cutoff of that many days. */
const AGES: readonly ({ days: number } | { mid: number })[] = [
  { days: 0.2 },
  { days: 1.5 },
  { mid: 2 },
  { days: 3 },
  { mid: 5 },
  { days: 6 },
  { mid: 7 },
  { days: 10 },
  { days: 20 },
  { mid: 30 },
  { days: 40 },
  { days: 100 },
  { days: 400 },
];

describe("stint prune --dry-run counts each job once, as stint prune deletes it", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 20 });
    const today = sql`(now() AT TIME ZONE 'UTC')::date`;
    await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}(${today} - 45, ${today} - 1)`.execute(test.db);
    const byAge: string[][] = AGES.map(() => []);
    for (const queue of QUEUES) {
      await enqueueJobs(test.store, queue, AGES.length);
      await test.store.cancelJobs({ queue, states: ["queued"], limit: AGES.length });
      await makeSucceededJobs(test.store, queue, AGES.length);
      await makeDeadJobs(test.store, queue, AGES.length);
      const { rows } = await sql<{ id: string; state: string }>`SELECT id, state FROM ${sql.id(test.schema, "finished_jobs")}
        WHERE queue = ${queue} ORDER BY id`.execute(test.db);
      for (const state of STATES) rows.filter((row) => row.state === state).forEach((row, index) => byAge[index]!.push(row.id));
    }
    for (const [index, age] of AGES.entries()) {
      await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at = ${finishedAt(age)}
        WHERE id = ANY(${byAge[index]!}::bigint[])`.execute(test.db);
    }
    // Longer than the global retention, shorter, and shorter for one state only; mail keeps the global one.
    await test.store.setQueueControls("audit", { retention: { succeededDays: 90, deadDays: 365 } });
    await test.store.setQueueControls("thumbs", { retention: { succeededDays: 1, cancelledDays: 0 } });
    await test.store.setQueueControls("push", { retention: { deadDays: 2 } });
  });
  afterEach(() => test.drop());

  const finishedJobs = async (): Promise<number> =>
    Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.id(test.schema, "finished_jobs")}`.execute(test.db)).rows[0]!.n);

  for (const flags of [
    [],
    ["--succeeded-days", "2", "--dead-days", "5", "--cancelled-days", "1"],
    ["--succeeded-days", "0.5", "--dead-days", "0.5", "--cancelled-days", "45"],
    ["--queue", "mail,thumbs,audit"],
  ]) {
    it(`agrees with the jobs a prune then deletes (${flags.join(" ") || "the default days"})`, async () => {
      // The second round finds what the first moved: jobs waiting for their day that went to finished_jobs_kept with it.
      for (const round of [1, 2]) {
        const before = await finishedJobs();
        const preview = await stint(["prune", "--dry-run", ...flags, "--schema", test.schema, "--json"]);
        expect(preview.code).to.equal(ExitCode.Ok);
        const { wouldDelete, total } = preview.json() as { wouldDelete: Counts; total: number };
        if (round === 1) expect(total, "the data has jobs to prune").to.be.greaterThan(0);

        const pruned = await stint(["prune", ...flags, "--batch", "7", "--schema", test.schema, "--json"]);
        expect(pruned.code).to.equal(ExitCode.Ok);
        expect(wouldDelete, `round ${round}`).to.deep.equal((pruned.json() as { deleted: Counts }).deleted);
        expect(before - (await finishedJobs()), `round ${round}`).to.equal(total);
      }
    });
  }
});

/** When a job of that age finished: `days` ago, or halfway from the start of the UTC day `mid` days ago to that moment. */
function finishedAt(age: { days: number } | { mid: number }): RawBuilder<unknown> {
  if ("days" in age) return sql`now() - ${age.days}::double precision * interval '1 day'`;
  const moment = sql`(now() - ${age.mid}::integer * interval '1 day')`;
  return sql`date_trunc('day', ${moment}, 'UTC') + (${moment} - date_trunc('day', ${moment}, 'UTC')) / 2`;
}

describe("stint prune --dry-run decides a partition's drop on what earlier passes leave in it", () => {
  let test: TestSchema;
  let day: string;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 20 });
    const today = sql`(now() AT TIME ZONE 'UTC')::date`;
    await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}(${today} - 12, ${today} - 1)`.execute(test.db);
    await makeDeadJobs(test.store, "mail", 1_500);
    await makeSucceededJobs(test.store, "thumbs", 1_000);
    await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at = now() - interval '10 days'`.execute(test.db);
    await test.store.setQueueControls("thumbs", { retention: { succeededDays: 1 } });
    day = (await sql<{ name: string }>`SELECT 'finished_jobs_' || to_char(${today} - 10, 'YYYYMMDD') AS name`.execute(test.db)).rows[0]!.name;
  });
  afterEach(() => test.drop());

  it("drops the day whole when a queue's own shorter pass has made it small enough, as the prune does", async () => {
    // Thumbs' own pass deletes its 1,000 jobs row by row first; then the 1,500 dead jobs are all the day holds.
    const flags = ["--succeeded-days", "60", "--dead-days", "5"];
    const preview = (await stint(["prune", "--dry-run", ...flags, "--schema", test.schema, "--json"])).json() as {
      wouldDelete: Counts;
      inPartitions: Counts;
      rowByRow: Counts;
      partitions: { name: string; jobs: number; kept: number }[];
    };
    expect(preview).to.deep.include({
      wouldDelete: { succeeded: 1_000, dead: 1_500, cancelled: 0 },
      inPartitions: { succeeded: 0, dead: 1_500, cancelled: 0 },
      rowByRow: { succeeded: 1_000, dead: 0, cancelled: 0 },
    });
    const holding = preview.partitions.filter((partition) => partition.jobs + partition.kept > 0);
    expect(holding.map(({ name, jobs, kept }) => ({ name, jobs, kept }))).to.deep.equal([{ name: day, jobs: 1_500, kept: 0 }]);

    const pruned = await stint(["prune", ...flags, "--schema", test.schema, "--json"]);
    expect((pruned.json() as { deleted: Counts }).deleted).to.deep.equal(preview.wouldDelete);
    const { rows } = await sql<{ found: boolean }>`SELECT to_regclass(format('%I.%I', ${test.schema}::text, ${day}::text)) IS NOT NULL AS found`.execute(
      test.db,
    );
    expect(rows[0]!.found, "the prune dropped the day whole").to.equal(false);
  });
});
