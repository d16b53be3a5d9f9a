import type { NewJob } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema } from "@stint/postgres-driver/testing";
import { startOwnPostgres } from "../../src/harness/own-postgres";

/**
 * A claim commits synchronously (see `claimBatch`): if it could be undone by
 * a server crash after the worker got its rows, another worker could run the
 * same jobs while this one still runs them. This crashes the server
 * (`pg_ctl restart -m immediate`: no checkpoint, crash recovery) the moment
 * claims return and checks that every claimed job is still `running` under
 * its owner with its attempt counted.
 */
describe("claims under a server crash", function () {
  this.timeout(180_000);

  it("keeps every job a claim returned claimed after an immediate restart", async () => {
    const server = await startOwnPostgres();
    try {
      const test = await createTestSchema({ connectionString: server.connectionString, maxConnections: 4, onPoolError: () => undefined });
      const jobs: NewJob[] = Array.from({ length: 600 }, (_, n) => ({
        queue: "durable",
        payloadJson: JSON.stringify({ n }),
        priority: 0,
        maxAttempts: 5,
        timeoutMs: null,
        runAt: null,
        delayMs: 0,
        dedupeKey: null,
      }));
      await test.store.enqueueMany(jobs);
      const claimed: string[] = [];
      for (let round = 0; round < 3; round += 1) {
        const batch = await test.store.claimBatch({ queue: "durable", workerId: `owner-${round}`, limit: 200, leaseMs: 600_000 });
        claimed.push(...batch.map((job) => job.id));
      }
      await server.restart("immediate");
      const check = await createTestSchema({ connectionString: server.connectionString, maxConnections: 1 });
      try {
        const { rows } = await sql<{ state: string; owners: number; attempts: number; n: number }>`SELECT state, count(DISTINCT locked_by)::int AS owners,
            min(attempts)::int AS attempts, count(*)::int AS n
          FROM ${sql.id(test.schema, "jobs")} GROUP BY state`.execute(check.db);
        expect(claimed).to.have.length(600);
        expect(rows).to.deep.equal([{ state: "running", owners: 3, attempts: 1, n: 600 }]);
      } finally {
        await check.drop();
        await test.drop().catch(() => undefined);
      }
    } finally {
      await server.stop();
    }
  });
});
