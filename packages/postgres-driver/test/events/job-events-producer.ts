/**
 * A second process for the job-events tests: over its own pool, it takes
 * one job of queue `events` through each state change (enqueue, claim,
 * progress, success, failure with a retry, death, cancel) and one job of
 * queue `other`, then prints the ids as JSON. Run with DATABASE_URL and
 * STINT_TEST_SCHEMA set.
 */
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { createDatabase, PostgresJobStore } from "../../src";

const Events = defineJob<{ n: number }>("events");
const Other = defineJob<{ n: number }>("other");

async function main(): Promise<void> {
  const schema = process.env["STINT_TEST_SCHEMA"]!;
  const database = createDatabase({ connectionString: process.env["DATABASE_URL"]!, maxConnections: 2 });
  const store = new PostgresJobStore({ db: database.db, statements: database.statements, schema });
  try {
    const [succeeds, fails, dies, cancelled] = (await store.enqueueMany([0, 1, 2, 3].map((n) => buildNewJob(Events, { n })))).map((result) => result.id);
    const other = (await store.enqueue(buildNewJob(Other, { n: 4 }))).id;
    const claimed = await store.claimBatch({ queue: "events", workerId: "producer", limit: 3, leaseMs: 60_000 });
    const attempt = (id: string | undefined): number => claimed.find((job) => job.id === id)!.attempt;
    await store.writeProgress({ workerId: "producer", job: { id: succeeds!, attempt: attempt(succeeds) }, progressJson: '{"done":1,"of":2}' });
    await store.completeJobs({ workerId: "producer", jobs: [{ id: succeeds!, attempt: attempt(succeeds), resultJson: null, durationMs: 1 }] });
    await store.scheduleRetries({
      workerId: "producer",
      jobs: [{ id: fails!, attempt: attempt(fails), delayMs: 60_000, failure: { message: "Error: flaky", code: "FLAKY" }, spendAttempt: true }],
    });
    await store.markJobsDead({ workerId: "producer", jobs: [{ id: dies!, attempt: attempt(dies), failure: { message: "Error: broken", code: "BROKEN" } }] });
    await store.cancelJob({ id: cancelled! });
    process.stdout.write(`${JSON.stringify({ succeeds, fails, dies, cancelled, other })}\n`);
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
