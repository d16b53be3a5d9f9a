import { ConfigError } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema } from "../../src/testing";

describe("createTestSchema", () => {
  it("creates a fresh migrated schema with a store over it, and drops it", async () => {
    const first = await createTestSchema();
    const second = await createTestSchema();
    try {
      expect(first.schema).to.match(/^stint_test_[0-9a-f]{12}$/);
      expect(second.schema).to.not.equal(first.schema);
      expect(first.store.schema).to.equal(first.schema);
      const { id } = await first.store.enqueue({
        queue: "q",
        payloadJson: "1",
        priority: 0,
        maxAttempts: 1,
        timeoutMs: null,
        runAt: null,
        delayMs: 0,
        dedupeKey: null,
      });
      expect(await second.store.getJob({ id })).to.equal(undefined);
      expect(first.applicationName).to.equal(first.schema);
      const { rows } = await sql<{ name: string }>`SELECT current_setting('application_name') AS name`.execute(first.db);
      expect(rows[0]?.name, "its connections can be told apart from other tests'").to.equal(first.schema);
    } finally {
      await second.drop();
    }
    const { db, schema } = first;
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${schema}`.execute(db);
    expect(rows[0]?.n).to.equal(1);
    await Promise.all([first.drop(), first.drop()]);
  });

  it("explains how to point it at a database when there is none", async () => {
    let caught: unknown;
    try {
      await createTestSchema({ connectionString: "" });
    } catch (thrown) {
      caught = thrown;
    }
    expect(caught).to.be.instanceOf(ConfigError);
    expect((caught as Error).message).to.contain("DATABASE_URL");
  });
});
