import { ConfigError, defineJob, JobClient } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "../../src/testing";

const Digest = defineJob<{ readonly edits: number }>("digest");

describe("dedupe modes on PostgreSQL", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 16 });
  });
  afterEach(async () => {
    await test.drop();
  });

  const activeJobs = async () => (await test.store.listJobs({ queue: Digest.name, states: ["queued", "running", "failed"], limit: 100 })) ?? [];

  it("keeps the existing job by default, and replaces a queued one's payload and run time with replace", async () => {
    const client = new JobClient(test.store);
    const first = await client.enqueue(Digest, { edits: 1 }, { dedupeKey: "doc:7", delayMs: 60_000 });
    const kept = await client.enqueue(Digest, { edits: 2 }, { dedupeKey: "doc:7" });
    expect(kept).to.deep.equal({ id: first.id, duplicate: true });
    expect((await test.store.getJob({ id: first.id }))?.payload).to.deep.equal({ edits: 1 });

    const replaced = await client.enqueue(Digest, { edits: 3 }, { dedupeKey: "doc:7", dedupe: "replace", priority: 5 });
    expect(replaced).to.deep.equal({ id: first.id, duplicate: true, replaced: true });
    const job = await test.store.getJob({ id: first.id });
    expect(job).to.deep.include({ payload: { edits: 3 }, priority: 5 });
    expect(job!.runAt.getTime(), "run time replaced too (no delay now)").to.be.below(Date.now() + 30_000);
  });

  it("gives a job that started one follow-up under replace, and leaves the running job's payload alone", async () => {
    const client = new JobClient(test.store);
    const first = await client.enqueue(Digest, { edits: 1 }, { dedupeKey: "doc:8" });
    await test.store.claimBatch({ queue: Digest.name, workerId: "w", limit: 1, leaseMs: 60_000 });
    const result = await client.enqueue(Digest, { edits: 2 }, { dedupeKey: "doc:8", dedupe: "replace" });
    expect(result.duplicate).to.equal(false);
    expect(result.id).to.not.equal(first.id);
    expect(await test.store.getJob({ id: first.id })).to.deep.include({ payload: { edits: 1 }, state: "running", dedupeKey: null });
    expect(await test.store.getJob({ id: result.id })).to.deep.include({ payload: { edits: 2 }, state: "queued", dedupeKey: "doc:8" });
  });

  it("debounce during a run: the one follow-up waits delayMs after the last enqueue", async () => {
    const client = new JobClient(test.store);
    const first = await client.enqueue(Digest, { edits: 1 }, { dedupeKey: "doc:10" });
    await test.store.claimBatch({ queue: Digest.name, workerId: "w", limit: 1, leaseMs: 60_000 });
    const followUp = await client.enqueue(Digest, { edits: 2 }, { dedupeKey: "doc:10", dedupe: "debounce", delayMs: 1_000 });
    const again = await client.enqueue(Digest, { edits: 3 }, { dedupeKey: "doc:10", dedupe: "debounce", delayMs: 60_000 });
    expect(again).to.deep.equal({ id: followUp.id, duplicate: true, replaced: true });
    const job = (await test.store.getJob({ id: followUp.id }))!;
    expect(job.payload).to.deep.equal({ edits: 3 });
    expect(job.runAt.getTime() - Date.now()).to.be.above(50_000);
    expect((await activeJobs()).map((active) => active.id).sort()).to.deep.equal([first.id, followUp.id].sort());
  });

  it("a claim racing 16 replacing enqueuers leaves the key on one job, with at most one follow-up", async () => {
    for (let round = 0; round < 10; round += 1) {
      const dedupeKey = `doc:race-${round}`;
      const clients = Array.from({ length: 16 }, () => new JobClient(test.store));
      const holder = await clients[0]!.enqueue(Digest, { edits: -1 }, { dedupeKey });
      const [claimed, ...results] = await Promise.all([
        test.store.claimBatch({ queue: Digest.name, workerId: "w", limit: 10, leaseMs: 60_000 }),
        ...clients.map((client, n) => client.enqueue(Digest, { edits: n }, { dedupeKey, dedupe: "replace" })),
      ]);
      const ofKey = (await activeJobs()).filter((job) => job.id === holder.id || results.some((result) => result.id === job.id));
      const ids = new Set(results.map((result) => result.id));
      expect(ids.size, "one job answers every enqueue after the claim").to.be.at.most(2);
      expect(
        ofKey.filter((job) => job.dedupeKey === dedupeKey),
        "one job holds the key",
      ).to.have.length(1);
      expect(ofKey.filter((job) => job.state === "queued").length, "at most one follow-up").to.be.at.most(1);
      for (const job of claimed) await test.store.cancelJob({ id: job.id });
      for (const job of ofKey) await test.store.cancelJob({ id: job.id });
    }
  });

  it("debounces: the job's run time moves to delayMs after the last enqueue of its key", async () => {
    const client = new JobClient(test.store);
    const first = await client.enqueue(Digest, { edits: 1 }, { dedupeKey: "doc:9", dedupe: "debounce", delayMs: 1_000 });
    const before = (await test.store.getJob({ id: first.id }))!.runAt.getTime();
    const again = await client.enqueue(Digest, { edits: 2 }, { dedupeKey: "doc:9", dedupe: "debounce", delayMs: 60_000 });
    expect(again).to.deep.include({ id: first.id, replaced: true });
    const job = (await test.store.getJob({ id: first.id }))!;
    expect(job.payload).to.deep.equal({ edits: 2 });
    expect(job.runAt.getTime() - before).to.be.above(55_000);
  });

  for (const mode of ["replace", "debounce"] as const) {
    it(`${mode}: 16 concurrent enqueuers of one key end with exactly one job, carrying the last payload`, async () => {
      const clients = Array.from({ length: 16 }, () => new JobClient(test.store));
      const results = await Promise.all(
        clients.map((client, n) => client.enqueue(Digest, { edits: n }, { dedupeKey: "doc:storm", dedupe: mode, delayMs: 60_000 })),
      );
      expect(new Set(results.map((result) => result.id)).size).to.equal(1);
      expect(results.filter((result) => !result.duplicate)).to.have.length(1);
      const last = await clients[0]!.enqueue(Digest, { edits: 99 }, { dedupeKey: "doc:storm", dedupe: mode, delayMs: 60_000 });
      const active = await activeJobs();
      expect(active.map((job) => job.id)).to.deep.equal([last.id]);
      expect(active[0]?.payload).to.deep.equal({ edits: 99 });
    });
  }

  it("refuses replace without a key, debounce without a delay, an unknown mode, and replace in a batch", async () => {
    expect(() => buildNewJob(Digest, { edits: 1 }, { dedupe: "replace" })).to.throw(ConfigError, /dedupeKey/);
    expect(() => buildNewJob(Digest, { edits: 1 }, { dedupeKey: "k", dedupe: "debounce" })).to.throw(ConfigError, /delayMs/);
    expect(() => buildNewJob(Digest, { edits: 1 }, { dedupeKey: "k", dedupe: "merge" as never })).to.throw(ConfigError, /keep, replace, debounce/);
    const error = await new JobClient(test.store).enqueueMany(Digest, [{ payload: { edits: 1 }, options: { dedupeKey: "k", dedupe: "replace" } }]).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect(await activeJobs()).to.deep.equal([]);
  });
});
