import { expect } from "chai";
import { z } from "zod";
import { createSilentLogger, defineJob, ErrorCode, JobClient, PayloadSchemaError, SchemaQueueWorker, type ItemOf, type JobStore } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "../../src/testing";

const SendWelcome = defineJob("send-welcome", {
  maxAttempts: 5,
  schema: z.object({ email: z.email(), name: z.string().min(1), tags: z.array(z.string()).default([]) }),
});
type Welcome = ItemOf<typeof SendWelcome>;

/** A worker with no parse of its own: the job kind's schema checks each payload. */
class WelcomeWorker extends SchemaQueueWorker<Welcome> {
  readonly job = SendWelcome;
  readonly handled: Welcome[] = [];

  constructor(store: JobStore) {
    super(store, createSilentLogger());
  }

  protected async processItem(item: Welcome): Promise<void> {
    this.handled.push(item);
  }
}

describe("a job kind with a schema, against PostgreSQL", () => {
  let t: TestSchema;

  beforeEach(async () => {
    t = await createTestSchema();
  });
  afterEach(async () => {
    await t.drop();
  });

  async function jobCount(): Promise<number> {
    const { count } = await t.db
      .withSchema(t.schema)
      .selectFrom("all_jobs")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  it("refuses at enqueue a payload that fails it, naming the field, and inserts nothing", async () => {
    const client = new JobClient(t.store);
    const error = await client.enqueue(SendWelcome, { email: "ada@example.com", name: "" }).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(PayloadSchemaError);
    expect((error as PayloadSchemaError).message).to.contain("payload.name:");
    expect(await jobCount()).to.equal(0);
    await client.enqueue(SendWelcome, { email: "ada@example.com", name: "Ada" });
    expect(await jobCount()).to.equal(1);
  });

  it("sends a stored payload that fails it to dead with the validator's message, without calling processItem", async () => {
    const good = await t.store.enqueue(buildNewJob(SendWelcome, { email: "ada@example.com", name: "Ada" }));
    // Written around enqueue's check, as an older producer or a hand-made row would.
    const bad = await t.store.enqueue({
      ...buildNewJob(SendWelcome, { email: "x", name: "x" }),
      payloadJson: JSON.stringify({ email: "not-an-address", name: "Bob" }),
    });
    const worker = new WelcomeWorker(t.store);
    const summary = await worker.start();

    expect(summary).to.include({ claimed: 2, succeeded: 1, dead: 1, retried: 0 });
    expect(worker.handled).to.deep.equal([{ email: "ada@example.com", name: "Ada", tags: [] }]);
    expect(await t.store.getJob({ id: good.id })).to.include({ state: "succeeded" });
    const dead = await t.store.getJob({ id: bad.id });
    expect(dead).to.include({ state: "dead", attempts: 1, errorCode: ErrorCode.Parse });
    expect(dead?.lastError).to.match(/^ParseError: invalid payload: payload\.email: Invalid email address/);
  });
});
