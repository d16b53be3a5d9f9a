import { newJob } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema } from "@stint/postgres-driver/testing";
import { startOwnPostgres } from "../../src/harness/own-postgres";

/**
 * A claim commits without waiting for its WAL flush unless asked to (see
 * `claimBatch`). This crashes the server (`pg_ctl restart -m immediate`: no
 * checkpoint, crash recovery) the moment claims return: a claim that waited
 * for its flush is still there, every job of it `running` under its owner
 * with its attempt counted; one that did not is either still there or
 * undone whole — its jobs queued again with the attempt uncounted, none
 * lost, none half-claimed.
 */
describe("claims under a server crash", function () {
  this.timeout(180_000);

  for (const durable of [true, false]) {
    it(
      durable
        ? "keeps every job a durable claim returned claimed after an immediate restart"
        : "keeps or undoes whole each claim that did not wait for its flush",
      async () => {
        const server = await startOwnPostgres();
        try {
          const test = await createTestSchema({ connectionString: server.connectionString, maxConnections: 4, onPoolError: () => undefined });
          const jobs = Array.from({ length: 600 }, (_, n) => newJob("durable", { n }, { maxAttempts: 5 }));
          await test.store.enqueueMany(jobs);
          const claimed: string[] = [];
          for (let round = 0; round < 3; round += 1) {
            const batch = await test.store.claimBatch({ queue: "durable", workerId: `owner-${round}`, limit: 200, leaseMs: 600_000, durable });
            claimed.push(...batch.map((job) => job.id));
          }
          await server.restart("immediate");
          const check = await createTestSchema({ connectionString: server.connectionString, maxConnections: 1 });
          try {
            const { rows } = await sql<{ state: string; owner: string | null; attempts: number; n: number }>`SELECT state, locked_by AS owner,
              attempts, count(*)::int AS n
            FROM ${sql.id(test.schema, "jobs")} GROUP BY state, locked_by, attempts ORDER BY locked_by`.execute(check.db);
            expect(claimed).to.have.length(600);
            if (durable) {
              expect(rows).to.deep.equal(["owner-0", "owner-1", "owner-2"].map((owner) => ({ state: "running", owner, attempts: 1, n: 200 })));
            } else {
              for (const row of rows) {
                const whole = row.n % 200 === 0;
                const kept = row.state === "running" && row.owner !== null && row.attempts === 1;
                const undone = row.state === "queued" && row.owner === null && row.attempts === 0;
                expect(whole && (kept || undone), JSON.stringify(rows)).to.equal(true);
              }
              expect(rows.reduce((sum, row) => sum + row.n, 0)).to.equal(600);
            }
          } finally {
            await check.drop();
            await test.drop().catch(() => undefined);
          }
        } finally {
          await server.stop();
        }
      },
    );
  }
});
