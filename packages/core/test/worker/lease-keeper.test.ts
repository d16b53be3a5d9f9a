import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import type { Logger } from "../../src/logging/logger";
import type { JobAttempt, JobStore } from "../../src/store/job-store";
import type { ExtendedLeases } from "../../src/store/store-params";
import { BatchLease } from "../../src/worker/batch-lease";
import { LeaseKeeper } from "../../src/worker/lease-keeper";
import { resolveWorkerOptions } from "../../src/worker/worker-options";
import { ManualClock } from "../../src/testing/manual-clock";
import { settle } from "../../src/testing/settle";
import { claimedJob } from "../support/claimed-job";

const QUIET: Logger = { error() {}, warn() {}, info() {}, debug() {}, child: () => QUIET };
const LEASE_MS = 3_000;
const MARGIN_MS = 300; // a tenth of the lease
const HEARTBEAT_MS = 1_000;

/** A store whose `extendLeases` answers as each test decides; nothing else is called. */
class HeartbeatStore {
  readonly calls: JobAttempt[][] = [];
  /** How the next heartbeats answer: the ids to confirm, "hang" (never answer) or an error. */
  answer: ((jobs: readonly JobAttempt[]) => readonly string[]) | "hang" | Error = (jobs) => jobs.map((job) => job.id);
  /** Ids the store reports cancelled (and does not extend). */
  readonly cancelled = new Set<string>();
  /** When set, each answer comes this long after the call, on `clock`. */
  late: { readonly clock: ManualClock; readonly ms: number } | undefined;

  extendLeases(params: { readonly jobs: readonly JobAttempt[] }): Promise<ExtendedLeases> {
    this.calls.push([...params.jobs]);
    const answer = this.answer;
    if (answer === "hang") return new Promise(() => undefined);
    if (answer instanceof Error) return Promise.reject(answer);
    const late = this.late;
    const answered = late === undefined ? Promise.resolve() : late.clock.sleep(late.ms);
    return answered.then(() => ({
      extended: answer(params.jobs).filter((id) => !this.cancelled.has(id)),
      cancelled: params.jobs.filter((job) => this.cancelled.has(job.id)).map((job) => job.id),
    }));
  }
}

function setUp() {
  const clock = new ManualClock();
  const store = new HeartbeatStore();
  const options = resolveWorkerOptions({ leaseMs: LEASE_MS, clock });
  const keeper = new LeaseKeeper(store as unknown as JobStore, options, "w1", QUIET);
  keeper.start();
  return { clock, store, keeper };
}

/** {@link setUp}, and `batch(...ids)`: holds the one lease of a batch of those jobs, claimed now. */
function setUpBatches() {
  const parts = setUp();
  const { clock, keeper } = parts;
  const batch = (...ids: string[]): BatchLease => {
    const deadline = keeper.deadlineOf(clock.now());
    const lease = new BatchLease(0, deadline);
    for (const id of ids) lease.add(claimedJob(id), 0, deadline);
    keeper.holdBatch(lease);
    return lease;
  };
  return { ...parts, batch };
}

describe("LeaseKeeper", () => {
  it("derives the heartbeat, its timeout and the safety margin from the lease", () => {
    expect(resolveWorkerOptions({ leaseMs: LEASE_MS })).to.include({ heartbeatIntervalMs: HEARTBEAT_MS, heartbeatTimeoutMs: 500, leaseMarginMs: MARGIN_MS });
    expect(resolveWorkerOptions({ leaseMs: 60_000 })).to.include({ leaseMarginMs: 6_000 });
    expect(resolveWorkerOptions({ leaseMs: 200 })).to.include({ leaseMarginMs: 50 });
  });

  it("aborts a handler at its local deadline while every heartbeat hangs", async () => {
    const { clock, store, keeper } = setUp();
    store.answer = "hang";
    const controller = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, controller, clock.now(), 0);

    await clock.advance(LEASE_MS - MARGIN_MS - 1);
    expect(controller.signal.aborted).to.equal(false);
    expect(store.calls.length).to.be.greaterThan(1); // hung heartbeats were given up and sent again
    await clock.advance(1);
    expect(controller.signal.aborted).to.equal(true);
    expect(errorCodeOf(controller.signal.reason)).to.equal(ErrorCode.LeaseLost);
    await keeper.stop();
  });

  it("moves the deadline with each confirmed renewal, from the time the renewal was sent", async () => {
    const { clock, store, keeper } = setUp();
    const controller = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, controller, clock.now(), 0);

    await clock.advance(5 * LEASE_MS);
    expect(controller.signal.aborted).to.equal(false);
    store.answer = new Error("connection reset");
    // Five leases are fifteen heartbeat intervals: the last confirmed renewal was sent just now.
    await clock.advance(LEASE_MS - MARGIN_MS - 1);
    expect(controller.signal.aborted).to.equal(false);
    await clock.advance(1);
    expect(controller.signal.aborted).to.equal(true);
    await keeper.stop();
  });

  it("counts a renewal that answers after the heartbeat's timeout, from the time it was sent", async () => {
    const { clock, store, keeper } = setUp();
    const timeoutMs = resolveWorkerOptions({ leaseMs: LEASE_MS }).heartbeatTimeoutMs;
    store.late = { clock, ms: timeoutMs + 200 }; // every answer late: a database slow to commit
    const controller = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, controller, clock.now(), 0);

    await clock.advance(4 * LEASE_MS);
    expect(controller.signal.aborted).to.equal(false);
    store.answer = "hang";
    // The last heartbeat that answered was sent at most one interval plus one late answer ago.
    await clock.advance(LEASE_MS - MARGIN_MS - HEARTBEAT_MS - timeoutMs - 200);
    expect(controller.signal.aborted).to.equal(false);
    await clock.advance(HEARTBEAT_MS + timeoutMs + 200);
    expect(controller.signal.aborted).to.equal(true);
    await keeper.stop();
  });

  it("aborts at once a lease the store no longer lists as this worker's", async () => {
    const { clock, store, keeper } = setUp();
    store.answer = (jobs) => jobs.filter((job) => job.id !== "2").map((job) => job.id);
    const kept = new AbortController();
    const taken = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, kept, clock.now(), 0);
    keeper.hold({ id: "2", attempt: 1 }, taken, clock.now(), 0);

    await clock.advance(HEARTBEAT_MS);
    expect(taken.signal.aborted).to.equal(true);
    expect(String((taken.signal.reason as Error).message)).to.contain("no longer lists this worker");
    expect(kept.signal.aborted).to.equal(false);
    await keeper.stop();
  });

  it("aborts with CancelledError a lease the store reports cancelled, and renews it no more", async () => {
    const { clock, store, keeper } = setUp();
    store.cancelled.add("2");
    const kept = new AbortController();
    const cancelled = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, kept, clock.now(), 0);
    keeper.hold({ id: "2", attempt: 1 }, cancelled, clock.now(), 0);

    await clock.advance(HEARTBEAT_MS);
    expect(errorCodeOf(cancelled.signal.reason)).to.equal(ErrorCode.Cancelled);
    expect((cancelled.signal.reason as Error).message).to.equal("job 2 (attempt 1) was cancelled while it ran; its handler must stop");
    expect(kept.signal.aborted).to.equal(false);
    expect(keeper.holds({ id: "2", attempt: 1 })).to.equal(false);
    await clock.advance(HEARTBEAT_MS);
    expect(store.calls.at(-1)).to.deep.equal([{ id: "1", attempt: 1 }]);
    await keeper.stop();
  });

  it("aborts with CancelledError the attempt it is told was cancelled, at once, and ignores attempts it does not hold", async () => {
    const { clock, store, keeper } = setUp();
    const cancelled = new AbortController();
    const otherAttempt = new AbortController();
    keeper.hold({ id: "5", attempt: 2 }, cancelled, clock.now(), 0);
    keeper.hold({ id: "6", attempt: 1 }, otherAttempt, clock.now(), 0);

    keeper.cancel({ id: "6", attempt: 2 });
    keeper.cancel({ id: "99", attempt: 1 });
    expect(otherAttempt.signal.aborted).to.equal(false);
    keeper.cancel({ id: "5", attempt: 2 });
    expect(errorCodeOf(cancelled.signal.reason)).to.equal(ErrorCode.Cancelled);
    expect(keeper.holds({ id: "5", attempt: 2 })).to.equal(false);
    await clock.advance(HEARTBEAT_MS);
    expect(store.calls.at(-1)).to.deep.equal([{ id: "6", attempt: 1 }]);
    // Its local deadline passing later does not turn the cancel into a lost lease.
    await clock.advance(LEASE_MS);
    expect(errorCodeOf(cancelled.signal.reason)).to.equal(ErrorCode.Cancelled);
    await keeper.stop();
  });

  it("keeps leases per attempt: releasing one attempt of a job leaves another attempt held", async () => {
    const { clock, store, keeper } = setUp();
    const older = new AbortController();
    const newer = new AbortController();
    keeper.hold({ id: "7", attempt: 1 }, older, clock.now(), 0);
    keeper.hold({ id: "7", attempt: 2 }, newer, clock.now(), 0);
    keeper.release({ id: "7", attempt: 1 }, older);

    expect(keeper.holds({ id: "7", attempt: 1 })).to.equal(false);
    expect(keeper.holds({ id: "7", attempt: 2 })).to.equal(true);
    await clock.advance(HEARTBEAT_MS);
    expect(store.calls.at(-1)).to.deep.equal([{ id: "7", attempt: 2 }]);
    await keeper.stop();
  });

  it("releases only the lease held for the attempt's own signal (the same attempt claimed again after a crash undid its claim)", async () => {
    const { clock, store, keeper } = setUp();
    const undone = new AbortController();
    const again = new AbortController();
    keeper.hold({ id: "7", attempt: 3 }, undone, clock.now(), 0);
    keeper.hold({ id: "7", attempt: 3 }, again, clock.now(), 0);
    keeper.release({ id: "7", attempt: 3 }, undone);

    expect(keeper.holds({ id: "7", attempt: 3 })).to.equal(true);
    await clock.advance(HEARTBEAT_MS);
    expect(store.calls.at(-1)).to.deep.equal([{ id: "7", attempt: 3 }]);
    keeper.release({ id: "7", attempt: 3 }, again);
    expect(keeper.holds({ id: "7", attempt: 3 })).to.equal(false);
    await keeper.stop();
  });

  it("on a failed connection aborts the attempts whose claims no later write has proved flushed", async () => {
    const { clock, keeper } = setUp();
    const durable = new AbortController();
    const flushedByHeartbeat = new AbortController();
    const unflushed = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, durable, clock.now(), keeper.claimed("durable", 1));
    keeper.hold({ id: "2", attempt: 1 }, flushedByHeartbeat, clock.now(), keeper.claimed("fast", 1));
    await clock.advance(HEARTBEAT_MS); // a renewal of both commits: claims up to now are on disk
    keeper.hold({ id: "3", attempt: 1 }, unflushed, clock.now(), keeper.claimed("fast", 1));

    keeper.connectionLost("connection reset");
    expect(durable.signal.aborted).to.equal(false);
    expect(flushedByHeartbeat.signal.aborted).to.equal(false);
    expect(unflushed.signal.aborted).to.equal(true);
    expect(errorCodeOf(unflushed.signal.reason)).to.equal(ErrorCode.LeaseLost);
    expect((unflushed.signal.reason as Error).message)
      .to.contain("may not have reached disk")
      .and.contain("connection reset");
    expect(keeper.holds({ id: "3", attempt: 1 })).to.equal(false);
    await keeper.stop();
  });

  it("aborts unflushed claims when a heartbeat fails, long before their deadline", async () => {
    const { clock, store, keeper } = setUp();
    store.answer = new Error("connection reset");
    const unflushed = new AbortController();
    const durable = new AbortController();
    // The durable claim first: one answering later would prove the claims before it on disk too.
    keeper.hold({ id: "2", attempt: 1 }, durable, clock.now(), keeper.claimed("durable", 1));
    keeper.hold({ id: "1", attempt: 1 }, unflushed, clock.now(), keeper.claimed("fast", 1));

    await clock.advance(HEARTBEAT_MS);
    expect(unflushed.signal.aborted).to.equal(true);
    expect(durable.signal.aborted).to.equal(false);
    await keeper.stop();
  });

  it("does not count a renewal that changed no row as a flush", async () => {
    const { clock, store, keeper } = setUp();
    store.answer = () => [];
    const other = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, other, clock.now(), keeper.claimed("fast", 1));
    await clock.advance(HEARTBEAT_MS); // the store lists none: lease 1 is lost, nothing was written
    const later = new AbortController();
    keeper.hold({ id: "2", attempt: 1 }, later, clock.now(), keeper.claimed("fast", 1));
    keeper.connectionLost("connection reset");
    expect(later.signal.aborted).to.equal(true);
    await keeper.stop();
  });

  it("stops lapsed handlers on resume before timers catch up (a process paused past its lease)", async () => {
    const { clock, keeper } = setUp();
    const controller = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, controller, clock.now(), 0);

    clock.jump(2 * LEASE_MS);
    expect(keeper.holds({ id: "1", attempt: 1 })).to.equal(false);
    keeper.expireLapsed();
    expect(controller.signal.aborted).to.equal(true);
    await keeper.stop();
  });

  it("expires a lease held later with an earlier deadline, and never one whose renewal moved its deadline", async () => {
    const { clock, keeper } = setUp();
    const renewed = new AbortController();
    keeper.hold({ id: "1", attempt: 1 }, renewed, clock.now(), 0);
    keeper.expireLapsed();
    // A claim whose answer came late: its lease counts from when it was sent, long ago.
    const late = new AbortController();
    keeper.hold({ id: "2", attempt: 1 }, late, clock.now() - 2 * LEASE_MS, 0);
    keeper.expireLapsed();
    expect(late.signal.aborted, "the late claim's lease had run out already").to.equal(true);
    expect(renewed.signal.aborted).to.equal(false);
    await clock.advance(HEARTBEAT_MS); // a confirmed renewal moves the first lease's deadline
    clock.jump(LEASE_MS - MARGIN_MS - HEARTBEAT_MS + 1); // one ms past the deadline the claim gave it
    keeper.expireLapsed(clock.now());
    expect(renewed.signal.aborted, "past its first deadline, not its renewed one").to.equal(false);
    await keeper.stop();
  });

  it("stops while a heartbeat hangs", async () => {
    const { clock, store, keeper } = setUp();
    store.answer = "hang";
    keeper.hold({ id: "1", attempt: 1 }, new AbortController(), clock.now(), 0);
    await clock.advance(HEARTBEAT_MS);
    expect(store.calls).to.have.length(1);

    let stopped = false;
    const stopping = keeper.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).to.equal(true);
    await stopping;
  });
});

describe("LeaseKeeper, with the one lease of a batch", () => {
  it("renews a batch's held attempts in the heartbeat and moves its one deadline", async () => {
    const { clock, store, keeper, batch } = setUpBatches();
    const lease = batch("1", "2", "3");
    lease.recorded(0);
    const start = clock.now();

    await clock.advance(HEARTBEAT_MS);
    expect(store.calls).to.deep.equal([
      [
        { id: "2", attempt: 1 },
        { id: "3", attempt: 1 },
      ],
    ]);
    expect(lease.deadline).to.equal(start + HEARTBEAT_MS + LEASE_MS - MARGIN_MS);
    expect(keeper.holdsBatch(lease)).to.equal(true);
    await keeper.stop();
  });

  it("stops every held attempt of a batch at its local deadline, with one LeaseLostError", async () => {
    const { clock, store, keeper, batch } = setUpBatches();
    store.answer = "hang";
    const lease = batch("1", "2");
    lease.recorded(0);

    await clock.advance(LEASE_MS - MARGIN_MS);
    const [first, second] = lease.attempts;
    expect(first!.signal.reason).to.equal(undefined); // recorded: no longer under the lease
    expect(errorCodeOf(second!.signal.reason)).to.equal(ErrorCode.LeaseLost);
    expect(keeper.holdsBatch(lease)).to.equal(false);
    expect(keeper.lostAny).to.equal(true);
    await keeper.stop();
  });

  it("stops one job alone when a renewal no longer lists it, or says it was cancelled", async () => {
    const { clock, store, keeper, batch } = setUpBatches();
    const lease = batch("1", "2", "3");
    store.answer = (jobs) => jobs.filter((job) => job.id !== "2").map((job) => job.id);
    store.cancelled.add("3");

    await clock.advance(HEARTBEAT_MS);
    const [kept, taken, cancelled] = lease.attempts;
    expect(kept!.signal.reason).to.equal(undefined);
    expect(errorCodeOf(taken!.signal.reason)).to.equal(ErrorCode.LeaseLost);
    expect(errorCodeOf(cancelled!.signal.reason)).to.equal(ErrorCode.Cancelled);
    expect(keeper.holdsBatch(lease)).to.equal(true);
    await keeper.stop();
  });

  it("finds a cancelled job in a batch and stops it alone", async () => {
    const { keeper, batch } = setUpBatches();
    const lease = batch("1", "2");

    keeper.cancel({ id: "2", attempt: 2 }); // another attempt: not this batch's
    expect(lease.attempts[1]!.signal.reason).to.equal(undefined);
    keeper.cancel({ id: "2", attempt: 1 });
    expect(errorCodeOf(lease.attempts[1]!.signal.reason)).to.equal(ErrorCode.Cancelled);
    expect(lease.attempts[0]!.signal.reason).to.equal(undefined);
    await keeper.stop();
  });

  it("stops a batch whose claim may not be on disk when the connection fails, and keeps one whose claim is", async () => {
    const { keeper, batch } = setUpBatches();
    const flushed = batch("1");
    const deadline = flushed.deadline;
    const unflushed = new BatchLease(keeper.claimed("fast", 1), deadline);
    unflushed.add(claimedJob("2"), unflushed.claim, deadline);
    keeper.holdBatch(unflushed);

    keeper.connectionLost("reset");
    expect(flushed.attempts[0]!.signal.reason).to.equal(undefined);
    expect(errorCodeOf(unflushed.attempts[0]!.signal.reason)).to.equal(ErrorCode.LeaseLost);
    await keeper.stop();
  });

  it("sends no heartbeat for a released batch", async () => {
    const { clock, store, keeper, batch } = setUpBatches();
    keeper.releaseBatch(batch("1"));

    await clock.advance(HEARTBEAT_MS);
    expect(store.calls).to.deep.equal([]);
    expect(keeper.lostAny).to.equal(false);
    await keeper.stop();
  });
});
