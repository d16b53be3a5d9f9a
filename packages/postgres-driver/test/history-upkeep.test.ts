import { expect } from "chai";
import { sql } from "kysely";
import { eventually } from "@stint/core/testing";
import { HistoryUpkeep } from "../src/history-upkeep";
import { ensureHistoryPartitions } from "../src/queries/ensure-history-partitions";
import { createTestSchema, type TestSchema } from "../src/testing";

const DAY_MS = 86_400_000;

/** A look at the partitions that counts how often it ran and how often it failed. */
function countingLook(look: () => Promise<number>): { looks: number; failures: number; look: () => Promise<number> } {
  const counted = {
    looks: 0,
    failures: 0,
    look: async (): Promise<number> => {
      counted.looks += 1;
      try {
        return await look();
      } catch (thrown) {
        counted.failures += 1;
        throw thrown;
      }
    },
  };
  return counted;
}

describe("HistoryUpkeep", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  /** The UTC day `offset` days from today, as the partition's suffix. */
  function day(offset: number): string {
    return new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "");
  }

  async function partitionExists(suffix: string): Promise<boolean> {
    const { rows } = await sql<{ found: boolean }>`SELECT to_regclass(${`"${test.schema}".finished_jobs_${suffix}`}) IS NOT NULL AS found`.execute(test.db);
    return rows[0]!.found;
  }

  it("creates a missing day partition on the first claim of the day, and starts nothing more that day", async () => {
    await sql`ALTER TABLE ${sql.id(test.schema, "finished_jobs")} DETACH PARTITION ${sql.id(test.schema, `finished_jobs_${day(3)}`)}`.execute(test.db);
    await sql`DROP TABLE ${sql.id(test.schema, `finished_jobs_${day(3)}`)}`.execute(test.db);
    let now = Date.now();
    const counted = countingLook(() => ensureHistoryPartitions(test.db, test.schema));
    const upkeep = new HistoryUpkeep(counted.look, () => now);
    upkeep.onClaim();
    await eventually(async () => expect(await partitionExists(day(3))).to.equal(true));
    upkeep.onClaim();
    upkeep.onClaim();
    expect(counted.looks).to.equal(1, "later claims of the same day start nothing");
    now += DAY_MS;
    upkeep.onClaim();
    expect(counted.looks).to.equal(2, "the first claim of the next day looks again");
  });

  it("looks again a minute after a failed look, not before", async () => {
    let now = Date.now();
    const counted = countingLook(() => ensureHistoryPartitions(test.db, "no_such_schema_here"));
    const upkeep = new HistoryUpkeep(counted.look, () => now);
    upkeep.onClaim();
    await eventually(() => expect(counted.failures).to.equal(1));
    upkeep.onClaim();
    expect(counted.looks).to.equal(1);
    now += 60_000;
    upkeep.onClaim();
    expect(counted.looks).to.equal(2);
    await eventually(() => expect(counted.failures).to.equal(2));
  });

  it("moves rows that landed in the kept partition into the day partition it creates", async () => {
    const finished = sql.id(test.schema, "finished_jobs");
    await sql`ALTER TABLE ${finished} DETACH PARTITION ${sql.id(test.schema, `finished_jobs_${day(5)}`)}`.execute(test.db);
    await sql`DROP TABLE ${sql.id(test.schema, `finished_jobs_${day(5)}`)}`.execute(test.db);
    await sql`INSERT INTO ${finished} (id, queue, payload, state, finished_at)
      VALUES (424242, 'q', '{}', 'succeeded', now() + interval '5 days')`.execute(test.db);
    const where = async (): Promise<string> =>
      (await sql<{ part: string }>`SELECT tableoid::regclass::text AS part FROM ${finished} WHERE id = 424242`.execute(test.db)).rows[0]!.part;
    expect(await where()).to.match(/finished_jobs_kept$/);
    expect(await ensureHistoryPartitions(test.db, test.schema)).to.equal(1);
    expect(await where()).to.match(new RegExp(`finished_jobs_${day(5)}$`));
  });
});
