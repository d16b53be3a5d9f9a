import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "chai";
import { MAX_EFFECT_KEY_LENGTH, MAX_PRIORITY, MAX_QUEUE_NAME_LENGTH, MAX_TIMEOUT_MS, MIN_PRIORITY } from "@stint/core";
import { MAX_INT4 } from "@stint/core/driver";

/** packages/postgres-driver/schema.sql, from dist/test/schema/: what the migrations build (see schema-snapshot.test.ts). */
const SNAPSHOT = readFileSync(resolve(__dirname, "../../../schema.sql"), "utf8");

/** The upper bound of a `char_length(column) <= N` check in the snapshot, by constraint name. */
function lengthBound(constraint: string): number {
  const match = new RegExp(`${constraint} CHECK \\(.*char_length\\(\\w+\\) <= (\\d+)\\)`).exec(SNAPSHOT);
  if (match === null) throw new Error(`schema.sql has no length check named ${constraint}`);
  return Number(match[1]);
}

/** The SQL type of `column` in the snapshot's `TABLE <schema>.<table>` section. */
function columnType(table: string, column: string): string {
  const section = new RegExp(`^TABLE \\w+\\.${table}\\n([\\s\\S]*?)(?:\\n\\n|(?![\\s\\S]))`, "m").exec(SNAPSHOT)?.[1] ?? "";
  const match = new RegExp(`^ {4}${column} (\\w+)`, "m").exec(section);
  if (match === null) throw new Error(`schema.sql has no column ${table}.${column}`);
  return match[1]!;
}

describe("the limits in @stint/core and the migrated schema", () => {
  it("bound queue names and effect keys the way the CHECK constraints do", () => {
    for (const constraint of ["jobs_queue_check", "schedules_queue_check", "queues_name_check"]) {
      expect(lengthBound(constraint), constraint).to.equal(MAX_QUEUE_NAME_LENGTH);
    }
    expect(lengthBound("effects_key_check")).to.equal(MAX_EFFECT_KEY_LENGTH);
  });

  it("bound priorities by smallint and timeouts by integer, the columns' types", () => {
    expect(columnType("jobs", "priority")).to.equal("smallint");
    expect([MIN_PRIORITY, MAX_PRIORITY]).to.deep.equal([-(2 ** 15), 2 ** 15 - 1]);
    expect(columnType("jobs", "timeout_ms")).to.equal("integer");
    expect(MAX_INT4).to.equal(2 ** 31 - 1);
    expect(MAX_TIMEOUT_MS).to.be.at.most(MAX_INT4);
  });
});
