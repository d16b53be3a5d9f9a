import { expect } from "chai";
import { sql } from "kysely";
import { LATEST_DATE_MS } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs } from "../helpers/job-states";

/** Times PostgreSQL stores that a JavaScript Date cannot, or only at its edge, set by SQL as an operator could. */
const EDGE_TIMES = [
  { run_at: "infinity", locked_until: "infinity", finished_at: "-infinity", state: "queued" },
  { run_at: "-infinity", locked_until: null, finished_at: null, state: "failed" },
  { run_at: "200000-01-01 00:00:00+00", locked_until: "290000-01-01 00:00:00+00", finished_at: "4713-01-01 00:00:00+00 BC", state: "queued" },
] as const;

describe("read commands on times a Date cannot hold", () => {
  let test: TestSchema;
  let ids: string[];

  before(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
    ids = await enqueueJobs(test.store, "edge", EDGE_TIMES.length);
    for (const [index, times] of EDGE_TIMES.entries()) {
      await sql`UPDATE ${sql.id(test.schema, "jobs")}
                   SET run_at = ${times.run_at}::timestamptz, locked_until = ${times.locked_until}::timestamptz,
                       finished_at = ${times.finished_at}::timestamptz, created_at = 'infinity', started_at = '-infinity',
                       updated_at = '290000-06-01 00:00:00+00', state = ${times.state}
                 WHERE id = ${ids[index]}::bigint`.execute(test.db);
    }
  });
  after(() => test.drop());

  it("reads ±infinity and times past year 275760 as the Date bounds, in order", async () => {
    const [infinite, negative, far] = await Promise.all(ids.map((id) => test.store.getJob({ id })));
    expect(infinite!.runAt.getTime()).to.equal(LATEST_DATE_MS);
    expect(infinite!.finishedAt!.getTime()).to.equal(-LATEST_DATE_MS);
    expect(negative!.runAt.getTime()).to.equal(-LATEST_DATE_MS);
    expect(far!.runAt.toISOString()).to.equal("+200000-01-01T00:00:00.000Z");
    expect(far!.lockedUntil!.getTime()).to.equal(LATEST_DATE_MS);
    expect(far!.finishedAt!.toISOString()).to.equal("-004712-01-01T00:00:00.000Z");
    expect(far!.updatedAt.getTime()).to.equal(LATEST_DATE_MS);
  });

  it("jobs list prints them, in text and --json", async () => {
    const text = await stint(["jobs", "list", "--queue", "edge", "--schema", test.schema]);
    expect(text.code, text.stderr).to.equal(ExitCode.Ok);
    expect(text.stdout).to.match(new RegExp(`${ids[0]}\\s+edge\\s+queued.*\\binfinity\\s+-infinity`));
    expect(text.stdout).to.match(new RegExp(`${ids[1]}\\s+edge\\s+failed.*\\s-infinity\\s`));
    expect(text.stdout).to.include("+200000-01-01 00:00:00Z");
    const json = await stint(["jobs", "list", "--queue", "edge", "--schema", test.schema, "--json"]);
    expect(json.code, json.stderr).to.equal(ExitCode.Ok);
    const { jobs } = json.json() as { jobs: { id: string }[] };
    const byId = new Map(jobs.map((job) => [job.id, job]));
    expect(byId.get(ids[0]!)).to.include({
      runAt: "infinity",
      lockedUntil: "infinity",
      finishedAt: "-infinity",
      createdAt: "infinity",
      startedAt: "-infinity",
    });
    expect(byId.get(ids[2]!)).to.include({ runAt: "+200000-01-01T00:00:00.000Z", lockedUntil: "infinity", updatedAt: "infinity" });
  });

  it("jobs show prints them, in text and --json", async () => {
    const text = await stint(["jobs", "show", ids[0]!, "--schema", test.schema]);
    expect(text.code, text.stderr).to.equal(ExitCode.Ok);
    expect(text.stdout).to.match(/run at\s+infinity\n/);
    expect(text.stdout).to.match(/finished at\s+-infinity\n/);
    const json = await stint(["jobs", "show", ids[1]!, "--schema", test.schema, "--json"]);
    expect(json.code, json.stderr).to.equal(ExitCode.Ok);
    expect(json.json()).to.include({ runAt: "-infinity", lockedUntil: null });
  });

  it("status counts a job due since -infinity, in text and --json", async () => {
    const text = await stint(["status", "edge", "--schema", test.schema]);
    expect(text.code, text.stderr).to.equal(ExitCode.Ok);
    // The age is counted from the earliest time PostgreSQL holds, at midnight: its hours are 0 in the first hour of a UTC day.
    expect(text.stdout).to.match(/edge\s+2\s+1\s+0\s+1\s+0\s+\d+d( \d+h)?\s/);
    const json = await stint(["status", "edge", "--schema", test.schema, "--json"]);
    expect(json.code, json.stderr).to.equal(ExitCode.Ok);
    const [edge] = (json.json() as { queues: { oldestDueAgeMs: number }[] }).queues;
    expect(edge).to.include({ queue: "edge", queued: 2, due: 1, retrying: 1 });
    expect(edge!.oldestDueAgeMs).to.be.above(6_000 * 365 * 86_400_000);
  });
});
