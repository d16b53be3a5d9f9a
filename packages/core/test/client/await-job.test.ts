import { expect } from "chai";
import { awaitJobEnd } from "../../src/client/await-job";
import { JobClient } from "../../src/client/job-client";
import { ConfigError } from "../../src/errors/config-errors";
import { ErrorCode } from "../../src/errors/error-codes";
import { InfrastructureError } from "../../src/errors/infrastructure-error";
import { hasErrorCode } from "../../src/errors/stint-error";
import { JobFailedError, JobNotFoundError, WaitTimeoutError } from "../../src/errors/wait-errors";
import { defineJob } from "../../src/job/job-definition";
import type { JobRecord } from "../../src/job/job-record";
import type { JobState } from "../../src/job/job-state";
import type { JobCompletionSource } from "../../src/store/job-completion-source";
import type { JobStore } from "../../src/store/job-store";
import { ManualClock } from "../../src/testing/manual-clock";
import { settle } from "../../src/testing/settle";

/** One job whose state a test sets, and a completion source whose hints the test sends. */
class OneJobStore {
  job: JobRecord | undefined;
  readonly calls: string[] = [];
  readonly hints = new Set<() => void>();
  failNextRead: Error | undefined;
  readonly completions: JobCompletionSource = {
    watch: async (jobId, onHint) => {
      this.calls.push(`watch ${jobId}`);
      this.hints.add(onHint);
      return { close: async () => void this.hints.delete(onHint) };
    },
  };

  constructor(state: JobState, fields: Partial<JobRecord> = {}) {
    this.job = jobRecord(state, fields);
  }

  async getJob(params: { id: string }): Promise<JobRecord | undefined> {
    this.calls.push(`read ${params.id}`);
    const failure = this.failNextRead;
    this.failNextRead = undefined;
    if (failure !== undefined) throw failure;
    return this.job?.id === params.id ? this.job : undefined;
  }

  /** Changes the job's state without a hint, as a lost notification would. */
  set(state: JobState, fields: Partial<JobRecord> = {}): void {
    this.job = jobRecord(state, fields);
  }

  hint(): void {
    for (const onHint of [...this.hints]) onHint();
  }

  get asStore(): JobStore {
    return this as unknown as JobStore;
  }
}

function jobRecord(state: JobState, fields: Partial<JobRecord>): JobRecord {
  return {
    id: "812",
    queue: "resize",
    payload: {},
    state,
    priority: 0,
    attempts: 1,
    maxAttempts: 3,
    runAt: new Date(0),
    timeoutMs: null,
    lockedBy: null,
    lockedUntil: null,
    dedupeKey: null,
    group: null,
    serialKey: null,
    workflowId: null,
    step: null,
    startBy: null,
    lastError: null,
    errorCode: null,
    result: null,
    createdAt: new Date(0),
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    updatedAt: new Date(0),
    meta: {},
    progress: null,
    ...fields,
  };
}

/** Settles to "pending", the value, or the rejection, without waiting for it. */
function track<T>(promise: Promise<T>): { readonly outcome: () => { state: "pending" | "resolved" | "rejected"; value?: T; error?: unknown } } {
  let outcome: { state: "pending" | "resolved" | "rejected"; value?: T; error?: unknown } = { state: "pending" };
  promise.then(
    (value) => (outcome = { state: "resolved", value }),
    (error: unknown) => (outcome = { state: "rejected", error }),
  );
  return { outcome: () => outcome };
}

describe("awaitJobEnd", () => {
  it("watches the job before it reads it, and resolves at once with a job that already succeeded", async () => {
    const store = new OneJobStore("succeeded", { result: { width: 640 } });
    const job = await awaitJobEnd(store.asStore, { id: "812" }, {}, new ManualClock());
    expect(job.result).to.deep.equal({ width: 640 });
    expect(store.calls).to.deep.equal(["watch 812", "read 812"]);
    expect(store.hints.size, "the watch is closed").to.equal(0);
  });

  it("reads the job again when a hint comes, without waiting for the poll", async () => {
    const store = new OneJobStore("running");
    const clock = new ManualClock();
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, { pollIntervalMs: 5_000 }, clock));
    await settle();
    expect(wait.outcome().state).to.equal("pending");
    store.set("succeeded", { result: 7 });
    store.hint();
    await settle();
    expect(wait.outcome()).to.deep.equal({ state: "resolved", value: store.job });
  });

  it("finds a finish nobody announced at the next poll, and not before", async () => {
    const store = new OneJobStore("running");
    const clock = new ManualClock();
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, { pollIntervalMs: 2_000 }, clock));
    await settle();
    store.set("succeeded");
    await clock.advance(1_999);
    expect(wait.outcome().state).to.equal("pending");
    await clock.advance(1);
    expect(wait.outcome().state).to.equal("resolved");
  });

  it("keeps waiting while a failed attempt's retry is scheduled, and resolves when a later attempt succeeds", async () => {
    const store = new OneJobStore("running");
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, {}, new ManualClock()));
    await settle();
    store.set("failed", { lastError: "Error: partner down", errorCode: "STINT_RETRYABLE" });
    store.hint();
    await settle();
    expect(wait.outcome().state).to.equal("pending");
    store.set("succeeded", { attempts: 2, result: "ok" });
    store.hint();
    await settle();
    expect(wait.outcome().value?.result).to.equal("ok");
  });

  it("rejects with a JobFailedError carrying the dead job's last error, code and attempts", async () => {
    const store = new OneJobStore("dead", { attempts: 3, lastError: "PermanentError: no such invoice\n    at x", errorCode: "STINT_PERMANENT" });
    const error = await awaitJobEnd(store.asStore, { id: "812" }, {}, new ManualClock()).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(JobFailedError);
    expect(hasErrorCode(error, ErrorCode.JobFailed)).to.equal(true);
    expect(error).to.include({
      jobId: "812",
      queue: "resize",
      state: "dead",
      attempts: 3,
      maxAttempts: 3,
      lastErrorCode: "STINT_PERMANENT",
      lastError: "PermanentError: no such invoice\n    at x",
    });
    expect((error as Error).message).to.equal("job 812 (resize) is dead after 3 of 3 attempts [STINT_PERMANENT]: PermanentError: no such invoice");
  });

  it("rejects with a JobFailedError in state cancelled for a cancelled job", async () => {
    const store = new OneJobStore("running");
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, {}, new ManualClock()));
    await settle();
    store.set("cancelled", { errorCode: null });
    store.hint();
    await settle();
    expect(wait.outcome().error).to.be.instanceOf(JobFailedError).and.include({ state: "cancelled" });
  });

  it("rejects with a JobNotFoundError for a job that does not exist", async () => {
    const store = new OneJobStore("queued");
    const error = await awaitJobEnd(store.asStore, { id: "9" }, {}, new ManualClock()).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(JobNotFoundError).and.include({ jobId: "9", code: ErrorCode.JobNotFound });
  });

  it("rejects with a WaitTimeoutError naming the job and its last state after timeoutMs, and closes the watch", async () => {
    const store = new OneJobStore("running");
    const clock = new ManualClock();
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, { timeoutMs: 30_000 }, clock));
    await clock.advance(29_999);
    expect(wait.outcome().state).to.equal("pending");
    await clock.advance(1);
    const error = wait.outcome().error;
    expect(error).to.be.instanceOf(WaitTimeoutError).and.include({ jobId: "812", timeoutMs: 30_000, lastState: "running" });
    expect((error as Error).message).to.equal("job 812 did not finish within 30000 ms (it was running)");
    expect(store.hints.size).to.equal(0);
  });

  it("rejects with the signal's reason when it aborts, and at once when it already has", async () => {
    const store = new OneJobStore("queued");
    const stop = new AbortController();
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, { signal: stop.signal }, new ManualClock()));
    await settle();
    const reason = new Error("shutting down");
    stop.abort(reason);
    await settle();
    expect(wait.outcome().error).to.equal(reason);
    expect(store.hints.size).to.equal(0);
    const again = await awaitJobEnd(store.asStore, { id: "812" }, { signal: stop.signal }, new ManualClock()).catch((thrown: unknown) => thrown);
    expect(again).to.equal(reason);
  });

  it("reads again at the next poll after a read the database failed for a reason worth retrying", async () => {
    const store = new OneJobStore("succeeded");
    store.failNextRead = new InfrastructureError("connection terminated");
    const clock = new ManualClock();
    const wait = track(awaitJobEnd(store.asStore, { id: "812" }, { pollIntervalMs: 100 }, clock));
    await settle();
    expect(wait.outcome().state).to.equal("pending");
    await clock.advance(100);
    expect(wait.outcome().state).to.equal("resolved");
  });

  it("polls alone with a store that has no completion hints", async () => {
    const store = new OneJobStore("running");
    const pollOnly = { getJob: (params: { id: string }) => store.getJob(params) } as unknown as JobStore;
    const clock = new ManualClock();
    const wait = track(awaitJobEnd(pollOnly, { id: "812" }, { pollIntervalMs: 1_000 }, clock));
    await settle();
    store.set("succeeded");
    await clock.advance(1_000);
    expect(wait.outcome().state).to.equal("resolved");
  });

  it("refuses a job of another queue than the kind named, and options it does not know", async () => {
    const store = new OneJobStore("succeeded");
    const clock = new ManualClock();
    const wrongKind = await awaitJobEnd(store.asStore, { id: "812", queue: "send-invoice" }, {}, clock).catch((thrown: unknown) => thrown);
    expect(wrongKind).to.be.instanceOf(ConfigError).with.property("message").that.includes('job 812 is a "resize" job, not "send-invoice"');
    for (const [options, option] of [
      [{ timeoutMs: 0 }, "timeoutMs"],
      [{ pollIntervalMs: 1 }, "pollIntervalMs"],
      [{ signal: "stop" }, "signal"],
      [{ timeout: 5 }, "waitFor.timeout"],
    ] as const) {
      const error = await awaitJobEnd(store.asStore, { id: "812" }, options as never, clock).catch((thrown: unknown) => thrown);
      expect(error, option).to.be.instanceOf(ConfigError).with.property("option", option);
    }
    const badId = await awaitJobEnd(store.asStore, { id: "x" }, {}, clock).catch((thrown: unknown) => thrown);
    expect(badId).to.be.instanceOf(ConfigError).with.property("option", "jobOrId");
  });
});

describe("JobClient.waitFor", () => {
  interface Resize {
    imageId: number;
  }
  const ResizeImage = defineJob<Resize, { width: number }>("resize");

  it("resolves with the result, typed by the job kind, from each of its three forms", async () => {
    const store = new OneJobStore("succeeded", { result: { width: 640 } });
    const client = new JobClient(store.asStore);
    const enqueued = { id: "812", duplicate: false } as Awaited<ReturnType<typeof client.enqueue<Resize, { width: number }>>>;
    const fromJob: { width: number } = await client.waitFor(enqueued);
    const fromKind: { width: number } = await client.waitFor(ResizeImage, "812");
    const fromId: unknown = await client.waitFor("812", { timeoutMs: 1_000 });
    expect([fromJob, fromKind, fromId]).to.deep.equal([{ width: 640 }, { width: 640 }, { width: 640 }]);
    // @ts-expect-error — the kind's result is { width: number }, not a string.
    const wrong: string = await client.waitFor(ResizeImage, "812");
    expect(wrong).to.deep.equal({ width: 640 });
  });

  it("refuses what is neither a job id, an enqueue result nor a job kind", async () => {
    const client = new JobClient(new OneJobStore("queued").asStore);
    const error = await client.waitFor(42 as never).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(ConfigError).with.property("option", "jobOrId");
  });
});
