import { expect } from "chai";
import fc from "fast-check";
import { ConfigError, InvalidNameError, PayloadError } from "../../src/errors/config-errors";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import { buildNewJob } from "../../src/job/enqueue-options";
import { defineJob } from "../../src/job/job-definition";
import { MAX_BATCH_SIZE, MAX_LEASE_MS, MAX_META_BYTES } from "../../src/limits";
import { CheckedJobStore, checkedJobStore } from "../../src/store/checked-job-store";
import type { NewJob, RetryingJob } from "../../src/store/job-store";
import { recordingStore, refusal } from "../support/recording-store";

const Note = defineJob<{ text: string }>("note");
const note = (overrides: Partial<NewJob> = {}): NewJob => ({ ...buildNewJob(Note, { text: "hi" }), ...overrides });
const claim = { queue: "note", workerId: "w-1", limit: 10, leaseMs: 60_000 };

describe("CheckedJobStore", () => {
  it("hands valid calls to the store unchanged and answers with the store's answer", async () => {
    const answers = { claimBatch: ["claimed"], completeJobs: ["1"], getJob: { id: "1" } };
    const { store, calls } = recordingStore(answers);
    const checked = new CheckedJobStore(store);
    const job = note();
    const completion = { workerId: "w-1", jobs: [{ id: "1", attempt: 1, resultJson: null, durationMs: 12.5 }] };
    expect(await checked.claimBatch(claim)).to.equal(answers.claimBatch);
    expect(await checked.completeJobs(completion)).to.equal(answers.completeJobs);
    expect(await checked.getJob({ id: "1" })).to.equal(answers.getJob);
    await checked.enqueue(job, "trx");
    expect(calls.map((call) => call.method)).to.deep.equal(["claimBatch", "completeJobs", "getJob", "enqueue"]);
    expect(calls[0]!.args[0]).to.equal(claim);
    expect(calls[1]!.args[0]).to.equal(completion);
    expect(calls[3]!.args).to.deep.equal([job, "trx"]);
  });

  it("refuses a bad claim before the store sees it, naming the field", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedJobStore(store);
    const cases: [Partial<typeof claim> & Record<string, unknown>, string][] = [
      [{ limit: 0 }, "limit"],
      [{ limit: MAX_BATCH_SIZE + 1 }, "limit"],
      [{ leaseMs: 0 }, "leaseMs"],
      [{ leaseMs: MAX_LEASE_MS + 1 }, "leaseMs"],
      [{ workerId: "" }, "workerId"],
      [{ workerId: "w\u0000" }, "workerId"],
      [{ maxTimeoutMs: -5 }, "maxTimeoutMs"],
      [{ takeOverExpired: "yes" }, "takeOverExpired"],
    ];
    for (const [change, option] of cases) {
      const error = await refusal(checked.claimBatch({ ...claim, ...change }));
      expect(error, option).to.be.instanceOf(ConfigError).with.property("option", option);
    }
    expect(await refusal(checked.claimBatch({ ...claim, queue: "Not A Queue" }))).to.be.instanceOf(InvalidNameError);
    expect(calls).to.deep.equal([]);
  });

  it("rejects rather than throws, so a refusal reaches the caller's await", () => {
    const checked = new CheckedJobStore(recordingStore().store);
    const call = checked.claimBatch({ ...claim, limit: -1 });
    expect(call).to.be.instanceOf(Promise);
    return call.then(
      () => expect.fail("refused"),
      (error: unknown) => expect(errorCodeOf(error)).to.equal(ErrorCode.Config),
    );
  });

  it("takes every limit from 1 to MAX_BATCH_SIZE and refuses every other number", async () => {
    const checked = new CheckedJobStore(recordingStore().store);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.double(), fc.constantFrom(MAX_BATCH_SIZE, MAX_BATCH_SIZE + 1)), async (limit) => {
        const allowed = Number.isInteger(limit) && limit >= 1 && limit <= MAX_BATCH_SIZE;
        const outcome = await checked.claimBatch({ ...claim, limit }).then(
          () => "passed",
          (error: unknown) => errorCodeOf(error),
        );
        expect(outcome).to.equal(allowed ? "passed" : ErrorCode.Config);
      }),
    );
  });

  it("refuses a job's bad fields with the error of the enqueue option of that name", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedJobStore(store);
    const cases: [Partial<NewJob> & Record<string, unknown>, string][] = [
      [{ priority: 40_000 }, "priority"],
      [{ maxAttempts: 0 }, "maxAttempts"],
      [{ timeoutMs: 0 }, "timeoutMs"],
      [{ runAt: new Date("nope") }, "runAt"],
      [{ delayMs: -1 }, "delayMs"],
      [{ dedupeKey: "" }, "dedupeKey"],
      [{ onDuplicate: "replace" }, "onDuplicate"],
      [{ payloadJson: 42 as never }, "payloadJson"],
    ];
    for (const [change, option] of cases) {
      expect(await refusal(checked.enqueue(note(change))), option)
        .to.be.instanceOf(ConfigError)
        .with.property("option", option);
    }
    expect(await refusal(checked.enqueue(note({ queue: "Bad Queue" })))).to.be.instanceOf(InvalidNameError);
    expect(calls).to.deep.equal([]);
  });

  it("holds payload and meta to the store's ceiling, naming the size and the limit", async () => {
    const checked = new CheckedJobStore(recordingStore().store, { maxPayloadBytes: 64 });
    const payload = await refusal(checked.enqueue(note({ payloadJson: JSON.stringify({ text: "é".repeat(27) }) })));
    expect(payload).to.be.instanceOf(PayloadError).and.include({ sizeBytes: 65, limitBytes: 64 });
    expect(payload.message).to.equal('payload of queue "note" is 65 bytes of JSON, more than the limit of 64 bytes');
    const meta = await refusal(checked.enqueue(note({ metaJson: JSON.stringify({ note: "x".repeat(MAX_META_BYTES) }) })));
    expect(meta).to.be.instanceOf(PayloadError).and.include({ sizeBytes: 8_203, limitBytes: MAX_META_BYTES, path: "meta" });
    expect(meta.message).to.equal('meta of queue "note" is 8203 bytes of JSON (meta), more than the limit of 8192 bytes');
    const nul = await refusal(checked.enqueue(note({ payloadJson: '{"text":"a\\u0000b"}' })));
    expect(nul).to.be.instanceOf(PayloadError);
    expect(() => new CheckedJobStore(recordingStore().store, { maxPayloadBytes: 1 })).to.throw(ConfigError, "maxPayloadBytes");
  });

  it("refuses a whole batch for one bad job, and answers an empty batch without the store", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedJobStore(store);
    expect(await refusal(checked.enqueueMany([note(), note({ priority: 1.5 })])))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "priority");
    expect(await refusal(checked.enqueueMany([note({ dedupeKey: "k", onDuplicate: "replace" })])))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "dedupe");
    expect(await checked.enqueueMany([])).to.deep.equal([]);
    expect(calls).to.deep.equal([]);
  });

  it("refuses a finalize batch with one malformed attempt, naming the field", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedJobStore(store);
    const retry: RetryingJob = { id: "1", attempt: 1, delayMs: 1_000, failure: { message: "boom", code: null }, spendAttempt: true };
    const cases: [Promise<unknown>, string][] = [
      [
        checked.completeJobs({
          workerId: "w",
          jobs: [
            { id: "1", attempt: 1, resultJson: null, durationMs: 1 },
            { id: "2", attempt: 0, resultJson: null, durationMs: 1 },
          ],
        }),
        "jobs.attempt",
      ],
      [checked.completeJobs({ workerId: "w", jobs: [{ id: "1", attempt: 1, resultJson: null, durationMs: Number.NaN }] }), "jobs.durationMs"],
      [checked.scheduleRetries({ workerId: "w", jobs: [{ ...retry, delayMs: -5 }] }), "jobs.delayMs"],
      [checked.scheduleRetries({ workerId: "w", jobs: [{ ...retry, outcome: "exploded" as never }] }), "jobs.outcome"],
      [checked.markJobsDead({ workerId: "w", jobs: [{ id: "1", attempt: 1, failure: null as never }] }), "jobs.failure"],
      [checked.extendLeases({ workerId: "w", leaseMs: 1_000, jobs: [{ id: "", attempt: 1 }] }), "jobs.id"],
      [checked.finishDeadHooks({ workerId: "w", hooks: "1" as never }), "hooks"],
    ];
    for (const [call, option] of cases)
      expect(await refusal(call), option)
        .to.be.instanceOf(ConfigError)
        .with.property("option", option);
    expect(calls).to.deep.equal([]);
  });

  it("checks the operator calls' filters and limits", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedJobStore(store);
    const cases: [Promise<unknown>, string][] = [
      [checked.listJobs({ limit: 0 }), "limit"],
      [checked.listJobs({ limit: 10, states: ["bogus" as never] }), "states"],
      [checked.deleteFinishedBefore({ states: ["queued" as never], olderThanMs: 0, limit: 10 }), "states"],
      [checked.deleteFinishedBefore({ states: [], olderThanMs: 0, limit: 10 }), "states"],
      [checked.deleteFinishedBefore({ states: ["dead"], olderThanMs: -1, limit: 10 }), "olderThanMs"],
      [checked.deleteEffectsBefore({ olderThanMs: 0, limit: MAX_BATCH_SIZE + 1 }), "limit"],
      [checked.retryDeadJobs({ queue: "q", limit: 0 }), "limit"],
      [checked.rescueExpiredLeases({ limit: 0 }), "limit"],
      [checked.countByQueue({ completedSinceMs: -1 }), "completedSinceMs"],
      [checked.cancelJob({ id: 812 as never }), "id"],
      [checked.runEffectOnce({ key: "", jobId: "1", resultJson: () => null }, async () => 1), "key"],
      [checked.completeInTransaction({ workerId: "w", job: { id: "1", attempt: 1 }, resultJson: () => null }, "work" as never), "work"],
    ];
    for (const [call, option] of cases)
      expect(await refusal(call), option)
        .to.be.instanceOf(ConfigError)
        .with.property("option", option);
    expect(await refusal(checked.readQueueGauges({ queues: ["ok", "Not OK"] }))).to.be.instanceOf(InvalidNameError);
    expect(calls).to.deep.equal([]);
  });

  it("hands the store a queue change as checked and frozen, with nothing but its three fields", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedJobStore(store);
    await checked.setQueueControls("note", { maxRunning: 3, rateLimit: { limit: 5, periodMs: 1_000 } });
    const [queue, change] = calls[0]!.args as [string, object];
    expect(queue).to.equal("note");
    expect(change).to.deep.equal({ maxRunning: 3, rateLimit: { limit: 5, periodMs: 1_000 } });
    expect(Object.isFrozen(change)).to.equal(true);
    expect(await refusal(checked.setQueueControls("note", { maxRunning: 0 })))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "maxRunning");
    expect(await refusal(checked.setQueueControls("bad\nname", { paused: true }))).to.be.instanceOf(InvalidNameError);
    expect(await refusal(checked.setQueueControls("x".repeat(513), { paused: true }))).to.be.instanceOf(InvalidNameError);
    expect(calls).to.have.length(1);
    // A name written by SQL that breaks the rule reaches the store, which only updates an existing row.
    await checked.setQueueControls("Billing / EU", { paused: true });
    expect(calls[1]!.args[0]).to.equal("Billing / EU");
  });

  it("checks a progress value's JSON text against MAX_PROGRESS_BYTES", async () => {
    const checked = new CheckedJobStore(recordingStore().store);
    const error = await refusal(checked.writeProgress({ workerId: "w", job: { id: "1", attempt: 1 }, progressJson: JSON.stringify("x".repeat(3_000)) }));
    expect(error).to.be.instanceOf(PayloadError).and.include({ limitBytes: 2_048 });
  });
});

describe("checkedJobStore", () => {
  it("wraps a store once: a checked store comes back as it is", () => {
    const { store } = recordingStore();
    const checked = checkedJobStore(store);
    expect(checked).to.be.instanceOf(CheckedJobStore);
    expect(checkedJobStore(checked)).to.equal(checked);
    expect(checkedJobStore(checked, { maxPayloadBytes: 64 }).maxPayloadBytes).to.equal(checked.maxPayloadBytes);
  });
});
