import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "chai";
import { describeSchema } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";

/** packages/postgres-driver/schema.sql, from dist/test/schema/. */
const SNAPSHOT = resolve(__dirname, "../../../schema.sql");

describe("the schema snapshot (schema.sql)", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  it("matches the schema the migrations build", async () => {
    const actual = await describeSchema(test.db, test.schema);
    const committed = readFileSync(SNAPSHOT, "utf8");
    expect(
      actual,
      "packages/postgres-driver/schema.sql is out of date: run `npm run build && node scripts/with-postgres.mjs node scripts/dump-schema.mjs` and review the diff",
    ).to.equal(committed);
  });
});
