import { newJob } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { diagnose } from "../../src";
import { readHistory } from "../../src/queries/diagnose-history";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { finishJobs, HistoryDays } from "./history-days";

describe("readHistory and the history checks of diagnose", () => {
  let test: TestSchema;
  let days: HistoryDays;

  beforeEach(async () => {
    test = await createTestSchema();
    days = new HistoryDays(test);
  });
  afterEach(async () => {
    await test.drop();
  });

  it("reads the size, the day partitions, the rows kept and the finished rows left in jobs", async () => {
    const fresh = await readHistory(test.db, test.schema);
    expect(fresh).to.deep.include({ rowsEstimate: 0, partitions: 9, daysAhead: 7, keptRows: 0, legacyRows: 0 });
    expect(fresh.oldest).to.deep.equal({ name: await days.nameOf(1), day: (await days.nameOf(1)).replace(/^finished_jobs_(\d{4})(\d\d)(\d\d)$/, "$1-$2-$3") });

    await days.make(15, 15);
    const finished = await finishJobs(test.store, "mail", "succeeded", 40);
    await days.backdate(finished.slice(0, 10), 15);
    await days.backdate(finished.slice(10, 12), 30);
    const [legacy] = await test.store.enqueueMany([newJob("old", {})]);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'dead', finished_at = now() WHERE id = ${legacy!.id}::bigint`.execute(test.db);
    await sql`ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);

    const history = await readHistory(test.db, test.schema);
    expect(history).to.deep.include({ rowsEstimate: 40, partitions: 10, keptRows: 2, legacyRows: 1, daysAhead: 7 });
    expect(history.oldest?.name).to.equal(await days.nameOf(15));
    expect(history.totalBytes).to.be.greaterThan(fresh.totalBytes);
  });

  it("passes the history checks on a fresh schema and warns about partitions running out and rows left in jobs", async () => {
    const fresh = await diagnose(test.db, test.schema);
    for (const name of ["history", "history-partitions", "legacy-history"]) {
      expect(
        fresh.checks.find((check) => check.name === name),
        name,
      ).to.include({ ok: true, severity: "info" });
    }
    for (let ahead = 1; ahead <= 7; ahead += 1) await sql`DROP TABLE ${sql.id(test.schema, await days.nameOf(-ahead))}`.execute(test.db);
    // No claim here: the store's first claim of a day makes the partitions ahead again.
    const [legacy] = await test.store.enqueueMany([newJob("old", {})]);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now() WHERE id = ${legacy!.id}::bigint`.execute(test.db);
    const checks = (await diagnose(test.db, test.schema)).checks;
    expect(checks.find((check) => check.name === "history-partitions")).to.deep.include({ ok: false, severity: "warning" });
    expect(checks.find((check) => check.name === "history-partitions")!.detail).to.match(/\(0 days ahead\)/);
    expect(checks.find((check) => check.name === "legacy-history")).to.deep.include({ ok: false, severity: "warning" });
    expect(checks.find((check) => check.name === "legacy-history")!.detail)
      .to.include("1 finished job is still in jobs")
      .and.include("stint migrate");
  });
});
