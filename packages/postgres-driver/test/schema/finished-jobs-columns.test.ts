import { expect } from "chai";
import { sql } from "kysely";
import { JOB_COLUMN_NAMES } from "../../src/queries/job-row";
import { createTestSchema, type TestSchema } from "../../src/testing";

interface ColumnRow {
  readonly name: string;
  readonly type: string;
  readonly not_null: boolean;
}

/** The message a promise was rejected with; fails the test when it resolves. */
async function failureOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (thrown) {
    return thrown instanceof Error ? thrown.message : String(thrown);
  }
  throw new Error("expected the statement to fail");
}

describe("finished_jobs and jobs", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  async function columnsOf(table: string): Promise<ColumnRow[]> {
    const { rows } = await sql<ColumnRow>`SELECT attname AS name, format_type(atttypid, atttypmod) AS type, attnotnull AS not_null
      FROM pg_attribute WHERE attrelid = to_regclass(${`"${test.schema}".${table}`}) AND attnum > 0 AND NOT attisdropped
     ORDER BY attnum`.execute(test.db);
    return rows;
  }

  it("have the same columns, of the same types, in the same order (so all_jobs and every move line up)", async () => {
    const active = await columnsOf("jobs");
    const finished = await columnsOf("finished_jobs");
    expect(finished.map(({ name, type }) => ({ name, type }))).to.deep.equal(active.map(({ name, type }) => ({ name, type })));
  });

  it("every column is one the statements that move a job copy", async () => {
    const names = (await columnsOf("jobs")).map((column) => column.name);
    expect([...names].sort()).to.deep.equal([...JOB_COLUMN_NAMES].sort());
  });

  it("refuses an active job and a finished job without a finishing time", async () => {
    const finished = sql.id(test.schema, "finished_jobs");
    const insert = (state: string, finishedAt: string | null) =>
      sql`INSERT INTO ${finished} (id, queue, payload, state, finished_at) VALUES (1, 'q', '{}', ${state}, ${finishedAt}::timestamptz)`.execute(test.db);
    expect(await failureOf(insert("queued", new Date().toISOString()))).to.match(/finished_jobs_state_check/);
    expect(await failureOf(insert("succeeded", null))).to.match(/finished_jobs_finished_at_check/);
  });
});
