import { defineJob, defineSchedule, ErrorCode, errorCodeOf, JobClient, PayloadError } from "@stint/core";
import { buildNewJob, type NewJob } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresJobStore } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";

interface Note {
  readonly text: string;
}

/** The JSON overhead of `{ text }` around the text itself. */
const OVERHEAD = JSON.stringify({ text: "" }).length;

/** A `{ text }` payload of exactly `bytes` bytes of JSON. */
function noteOf(bytes: number): Note {
  return { text: "x".repeat(bytes - OVERHEAD) };
}

async function refusal(promise: Promise<unknown>): Promise<PayloadError> {
  try {
    await promise;
  } catch (thrown) {
    expect(errorCodeOf(thrown), String(thrown)).to.equal(ErrorCode.Payload);
    return thrown as PayloadError;
  }
  throw new Error("expected a PayloadError, the call succeeded");
}

describe("the payload size cap", () => {
  let t: TestSchema;

  beforeEach(async () => {
    t = await createTestSchema({ maxConnections: 4 });
  });
  afterEach(async () => {
    await t.drop();
  });

  async function jobCount(): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(t.schema, "all_jobs")}`.execute(t.db);
    return rows[0]?.n ?? -1;
  }

  describe("on a job kind (maxPayloadBytes)", () => {
    const Note = defineJob<Note>("note", { maxPayloadBytes: 1_000 });

    it("refuses a payload one byte over with a PayloadError naming the size and the limit, and inserts nothing", async () => {
      const client = new JobClient(t.store);
      const error = await refusal(client.enqueue(Note, noteOf(1_001)));
      expect(error.message).to.equal('payload of queue "note" is 1001 bytes of JSON, more than the limit of 1000 bytes');
      expect(error).to.include({ sizeBytes: 1_001, limitBytes: 1_000 });
      expect(await jobCount()).to.equal(0);
    });

    it("accepts a payload exactly at the cap", async () => {
      const { id } = await new JobClient(t.store).enqueue(Note, noteOf(1_000));
      expect((await t.store.getJob({ id }))?.payload).to.deep.equal(noteOf(1_000));
    });

    it("refuses a whole enqueueMany batch with one payload over the cap", async () => {
      const items = Array.from({ length: 100 }, (_, index) => ({ payload: noteOf(index === 57 ? 1_001 : 1_000) }));
      await refusal(new JobClient(t.store).enqueueMany(Note, items));
      expect(await jobCount()).to.equal(0);
    });

    it("holds schedules of the kind to the same cap", () => {
      expect(() => defineSchedule({ name: "big-note", job: Note, cron: "0 * * * *", payload: noteOf(1_001) })).to.throw(PayloadError, "limit of 1000 bytes");
    });
  });

  describe("in the store (every path, hand-built jobs included)", () => {
    const Big = defineJob<Note>("big", { maxPayloadBytes: 8 * 1_048_576 });

    it("refuses by default a payload over 1 MiB that the job kind allowed, before any SQL", async () => {
      const job = buildNewJob(Big, noteOf(1_048_577));
      const error = await refusal(t.store.enqueue(job));
      expect(error.message).to.equal('payload of queue "big" is 1048577 bytes of JSON, more than the limit of 1048576 bytes');
      await refusal(t.store.enqueueMany([buildNewJob(Big, noteOf(20)), job]));
      expect(await jobCount()).to.equal(0);
      await t.store.enqueue(buildNewJob(Big, noteOf(1_048_576)));
      expect(await jobCount()).to.equal(1);
    });

    it("takes its own cap and applies it to raw NewJobs, counting UTF-8 bytes", async () => {
      const store = new PostgresJobStore({ db: t.db, schema: t.schema, maxPayloadBytes: 64 });
      const raw: NewJob = { ...buildNewJob(Big, { text: "" }), payloadJson: JSON.stringify({ text: "é".repeat(27) }) }; // 11 + 54 = 65 bytes
      const error = await refusal(store.enqueue(raw));
      expect(error).to.include({ sizeBytes: 65, limitBytes: 64 });
      await store.enqueue({ ...raw, payloadJson: JSON.stringify({ text: `${"é".repeat(26)}x` }) }); // 64 bytes
      expect(await jobCount()).to.equal(1);
    });

    it("refuses a schedule whose payload is over the store's cap", async () => {
      const store = new PostgresJobStore({ db: t.db, schema: t.schema, maxPayloadBytes: 64 });
      const { spec } = defineSchedule({ name: "noisy", job: Big, cron: "0 * * * *", payload: noteOf(65) });
      await refusal(store.syncSchedules({ schedules: [spec], firstRunAt: (_spec, now) => now }));
      expect(await store.listSchedules()).to.deep.equal([]);
    });

    it("validates its cap", () => {
      expect(() => new PostgresJobStore({ db: t.db, maxPayloadBytes: 0 })).to.throw("maxPayloadBytes");
    });
  });
});
