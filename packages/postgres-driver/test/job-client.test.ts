import { expect } from "chai";
import { defineJob, ErrorCode, hasErrorCode, JobClient, PayloadError } from "@stint/core";
import { createTestSchema, type TestSchema } from "../src/testing";

const Charge = defineJob<{ customerId: number; amount: unknown }>("charge");

describe("JobClient against PostgreSQL", () => {
  let t: TestSchema;
  let client: JobClient;

  beforeEach(async () => {
    t = await createTestSchema();
    client = new JobClient(t.store);
  });
  afterEach(async () => {
    await t.drop();
  });

  async function jobCount(): Promise<number> {
    const [counts] = await t.store.countByQueue({ queues: [Charge.name] });
    return Object.values(counts?.counts ?? {}).reduce((sum, n) => sum + n, 0);
  }

  it("enqueues a typed job with the kind's defaults", async () => {
    const { id, duplicate } = await client.enqueue(Charge, { customerId: 7, amount: 1_250 });
    expect(duplicate).to.equal(false);
    expect(await t.store.getJob({ id })).to.include({ queue: "charge", state: "queued", maxAttempts: 25, priority: 0 });
  });

  it("emits job.enqueued for every job it inserts, duplicates marked, and nothing for a refused payload", async () => {
    const seen: string[] = [];
    client.events.on("job.enqueued", (event) =>
      seen.push(`${event.queue} ${event.jobId} duplicate=${event.duplicate} attempt=${event.attempt} ${event.at instanceof Date}`),
    );
    const first = await client.enqueue(Charge, { customerId: 7, amount: 1 }, { dedupeKey: "charge-7" });
    await client.enqueue(Charge, { customerId: 7, amount: 1 }, { dedupeKey: "charge-7" });
    const [a, b] = await client.enqueueMany(Charge, [{ payload: { customerId: 8, amount: 1 } }, { payload: { customerId: 9, amount: 1 } }]);
    await client.enqueue(Charge, { customerId: 7, amount: 10n }).catch(() => undefined);
    expect(seen).to.deep.equal([
      `charge ${first.id} duplicate=false attempt=0 true`,
      `charge ${first.id} duplicate=true attempt=0 true`,
      `charge ${a?.id} duplicate=false attempt=0 true`,
      `charge ${b?.id} duplicate=false attempt=0 true`,
    ]);
  });

  it("refuses a payload that is not JSON-serialisable with a clear error and inserts nothing", async () => {
    const error = await client.enqueue(Charge, { customerId: 7, amount: 10n }).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(PayloadError);
    expect(hasErrorCode(error, ErrorCode.Payload)).to.equal(true);
    expect((error as Error).message).to.equal("payload is not JSON-serialisable: payload.amount is a bigint, which JSON cannot carry; pass it as a string");
    expect(await jobCount()).to.equal(0);
  });

  it("checks every payload of a batch before writing any", async () => {
    const items = [{ payload: { customerId: 1, amount: 5 } }, { payload: { customerId: 2, amount: Number.NaN } }];
    const error = await client.enqueueMany(Charge, items).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(PayloadError);
    expect((error as Error).message).to.contain("payload.amount is NaN");
    expect(await jobCount()).to.equal(0);
  });

  it("refuses an invalid enqueue option, naming it, and inserts nothing", async () => {
    const error = await client.enqueue(Charge, { customerId: 1, amount: 1 }, { maxAttempts: 0 }).catch((thrown: unknown) => thrown);
    expect((error as Error).message).to.contain("`maxAttempts`");
    expect(await jobCount()).to.equal(0);
  });
});
