import { defineJob, type JobEvent } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresJobEvents } from "../../src";
import { jobEventChannel } from "../../src/events/job-event-channel";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { RawListener } from "../support/raw-listener";

const Sentinel = defineJob<{ n: number }>("sentinel");

describe("the enqueue SQL function and job events", () => {
  let test: TestSchema;
  let events: PostgresJobEvents;

  beforeEach(async () => {
    test = await createTestSchema();
    events = new PostgresJobEvents({ connectionString: test.connectionString, schema: test.schema, reconnectMinDelayMs: 20 });
  });
  afterEach(async () => {
    await events.close();
    await test.drop();
  });

  /** `<schema>.enqueue(queue, payload, dedupe_key => …, dedupe => …)` through `sql`; returns the id it answers. */
  async function sqlEnqueue(queue: string, payload: unknown, dedupeKey: string | null = null, dedupe = "keep"): Promise<string> {
    const { rows } = await sql<{ id: string }>`SELECT ${sql.id(test.schema, "enqueue")}(${queue}, ${JSON.stringify(payload)}::jsonb,
      dedupe_key => ${dedupeKey}::text, dedupe => ${dedupe}::text) AS id`.execute(test.db);
    return String(rows[0]!.id);
  }

  it("sends enqueued for each job it inserts, as JobClient.enqueue does, and nothing for a dedupe hit or a replaced holder", async () => {
    const seen: JobEvent[] = [];
    await events.subscribe({}, { onEvent: (event) => void seen.push(event) });
    const plain = await sqlEnqueue("mail", { n: 1 });
    const keyed = await sqlEnqueue("mail", { n: 2 }, "mail:2");
    expect(await sqlEnqueue("mail", { n: 3 }, "mail:2"), "a dedupe hit").to.equal(keyed);
    expect(await sqlEnqueue("mail", { n: 4 }, "mail:2", "replace"), "a replaced holder").to.equal(keyed);
    const replacing = await sqlEnqueue("mail", { n: 5 }, "mail:5", "replace");
    const { id: sentinel } = await test.store.enqueue(buildNewJob(Sentinel, { n: 0 }));
    await eventually(() => seen.some((event) => event.jobId === sentinel), { timeoutMs: 10_000, what: "the sentinel's event" });

    expect(seen.filter((event) => event.queue === "mail").map(({ at: _at, ...rest }) => rest)).to.deep.equal([
      { type: "enqueued", jobId: plain, queue: "mail", attempt: 0 },
      { type: "enqueued", jobId: keyed, queue: "mail", attempt: 0 },
      { type: "enqueued", jobId: replacing, queue: "mail", attempt: 0 },
    ]);
  });

  it("sends its event when the caller's transaction commits, and none when it rolls back", async () => {
    const seen: JobEvent[] = [];
    await events.subscribe({ queues: ["mail", "sentinel"] }, { onEvent: (event) => void seen.push(event) });
    const rolledBack = await test.db
      .transaction()
      .execute(async (trx) => {
        await sql`SELECT ${sql.id(test.schema, "enqueue")}('mail', '{"n": 1}')`.execute(trx);
        throw new Error("roll back");
      })
      .catch((error: unknown) => (error as Error).message);
    expect(rolledBack).to.equal("roll back");
    const committed = await test.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string }>`SELECT ${sql.id(test.schema, "enqueue")}('mail', '{"n": 2}') AS id`.execute(trx);
      return String(rows[0]!.id);
    });
    const { id: sentinel } = await test.store.enqueue(buildNewJob(Sentinel, { n: 0 }));
    await eventually(() => seen.some((event) => event.jobId === sentinel), { timeoutMs: 10_000, what: "the sentinel's event" });
    expect(seen.filter((event) => event.queue === "mail").map((event) => event.jobId)).to.deep.equal([committed]);
  });

  it("sends no notification while nobody subscribes", async () => {
    const raw = await RawListener.open(test.connectionString, jobEventChannel(test.schema));
    try {
      const heard = await raw.heardAfter(test.db, async () => {
        await sqlEnqueue("mail", { n: 1 });
        await sqlEnqueue("mail", { n: 2 }, "mail:2", "replace");
      });
      expect(heard).to.deep.equal([]);
    } finally {
      await raw.close();
    }
  });
});
