import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { InfrastructureError } from "../../src/errors/infrastructure-error";
import { errorCodeOf } from "../../src/errors/stint-error";
import type { Logger } from "../../src/logging/logger";
import type { JobAttempt } from "../../src/store/job-store";
import { StoreRetryPolicy } from "../../src/worker/store-retry-policy";
import { WriteBatcher, type RowResult } from "../../src/worker/write-batcher";
import { ManualClock } from "../../src/testing/manual-clock";
import { settle } from "../../src/testing/settle";

const LEASE_MS = 3_000;

/**
 * A fenced many-row write that answers as each test decides: by default
 * every row applies; `held` statements wait for `release()`; rows whose id
 * is in `missed` do not apply; a statement holding a row of `refused` (or
 * any statement while `outage` is set) rejects.
 */
class FakeWrite {
  readonly statements: string[][] = [];
  readonly missed = new Set<string>();
  readonly refused = new Set<string>();
  outage: Error | undefined;
  hold = false;
  #released: (() => void)[] = [];

  readonly write = async (rows: readonly JobAttempt[]): Promise<readonly string[]> => {
    this.statements.push(rows.map((row) => row.id));
    if (this.hold) await new Promise<void>((resolve) => this.#released.push(resolve));
    if (this.outage) throw this.outage;
    if (rows.some((row) => this.refused.has(row.id))) throw Object.assign(new Error(`invalid input in row ${rows.length}`), { code: ErrorCode.Database });
    return rows.filter((row) => !this.missed.has(row.id)).map((row) => row.id);
  };

  /** Answers every statement waiting so far. */
  release(): void {
    this.hold = false;
    for (const resolve of this.#released.splice(0)) resolve();
  }
}

function setUp() {
  const clock = new ManualClock();
  const store = new FakeWrite();
  const errors: string[] = [];
  const log: Logger = { error: (message) => errors.push(message), warn() {}, info() {}, debug() {}, child: () => log };
  const batcher = new WriteBatcher<JobAttempt>({ write: store.write, policy: new StoreRetryPolicy(clock), giveUpAfterMs: LEASE_MS, log, noun: "retries" });
  return { clock, store, batcher, errors };
}

function row(id: string): JobAttempt {
  return { id, attempt: 1 };
}

/** Where a promise stands without waiting for it. */
function track<T>(promise: Promise<T>): { result?: T; error?: unknown } {
  const state: { result?: T; error?: unknown } = {};
  promise.then(
    (result) => (state.result = result),
    (error: unknown) => (state.error = error),
  );
  return state;
}

describe("WriteBatcher: one statement for the rows that waited", () => {
  it("writes the rows handed in together as one statement", async () => {
    const { store, batcher } = setUp();
    const results = await Promise.all(["1", "2", "3"].map((id) => batcher.write(row(id))));
    expect(results).to.deep.equal(["applied", "applied", "applied"]);
    expect(store.statements).to.deep.equal([["1", "2", "3"]]);
  });

  it("sends the rows that arrive while a write is in flight together in the next statement", async () => {
    const { store, batcher } = setUp();
    store.hold = true;
    const first = track(batcher.write(row("1")));
    await settle();
    expect(store.statements).to.deep.equal([["1"]]);
    const later = ["2", "3", "4"].map((id) => track(batcher.write(row(id))));
    await settle();
    expect(store.statements).to.deep.equal([["1"]]);
    expect(first).to.deep.equal({});
    store.release();
    await batcher.drain();
    expect(store.statements).to.deep.equal([["1"], ["2", "3", "4"]]);
    expect([first, ...later].map((state) => state.result)).to.deep.equal(["applied", "applied", "applied", "applied"]);
  });

  it("tells each row whether its fence matched", async () => {
    const { store, batcher } = setUp();
    store.missed.add("2");
    const results = await Promise.all(["1", "2", "3"].map((id) => batcher.write(row(id))));
    const expected: RowResult[] = ["applied", "fence-missed", "applied"];
    expect(results).to.deep.equal(expected);
  });

  it("writes a refused statement again row by row, so only the refused row rejects", async () => {
    const { store, batcher, errors } = setUp();
    store.refused.add("2");
    store.missed.add("3");
    const states = ["1", "2", "3"].map((id) => track(batcher.write(row(id))));
    await batcher.drain();
    expect(store.statements).to.deep.equal([["1", "2", "3"], ["1"], ["2"], ["3"]]);
    expect(states.map((state) => state.result)).to.deep.equal(["applied", undefined, "fence-missed"]);
    expect(errorCodeOf(states[1]!.error)).to.equal(ErrorCode.Database);
    expect(errors).to.deep.equal(["Could not record 1 retries: invalid input in row 1"]);
  });

  it("retries an outage with the store policy and writes the rows once the store answers", async () => {
    const { clock, store, batcher } = setUp();
    store.outage = new InfrastructureError("connection reset");
    const states = ["1", "2"].map((id) => track(batcher.write(row(id))));
    await clock.advance(100);
    expect(store.statements).to.deep.equal([
      ["1", "2"],
      ["1", "2"],
    ]);
    store.outage = undefined;
    await clock.advance(200);
    await batcher.drain();
    expect(store.statements).to.have.length(3);
    expect(states.map((state) => state.result)).to.deep.equal(["applied", "applied"]);
  });

  it("rejects every row of a batch the outage outlasts, without writing them one by one", async () => {
    const { clock, store, batcher, errors } = setUp();
    store.outage = new InfrastructureError("connection reset");
    const states = ["1", "2"].map((id) => track(batcher.write(row(id))));
    await clock.advance(LEASE_MS + 5_000);
    await batcher.drain();
    expect(store.statements.every((statement) => statement.length === 2)).to.equal(true);
    expect(states.map((state) => errorCodeOf(state.error))).to.deep.equal([ErrorCode.Infrastructure, ErrorCode.Infrastructure]);
    expect(errors).to.deep.equal(["Could not record 2 retries: connection reset"]);
  });

  it("writes nothing and drains at once when no row was handed in", async () => {
    const { store, batcher } = setUp();
    await batcher.drain();
    expect(batcher.busy).to.equal(false);
    expect(store.statements).to.deep.equal([]);
  });
});

describe("WriteBatcher: a group of rows with one promise", () => {
  it("writes a group with the single rows that waited, in one statement, and answers each row in order", async () => {
    const { store, batcher } = setUp();
    store.missed.add("g2");
    const single = batcher.write(row("1"));
    const group = batcher.writeMany(["g1", "g2", "g3"].map(row));
    expect(await single).to.equal("applied");
    expect(await group).to.deep.equal(["applied", "fence-missed", "applied"]);
    expect(store.statements).to.deep.equal([["1", "g1", "g2", "g3"]]);
  });

  it("never splits a group across statements: a group that would pass the statement's size waits for the next one", async () => {
    const { store, batcher } = setUp();
    const first = batcher.writeMany(Array.from({ length: 600 }, (_, n) => row(`a${n}`)));
    const second = batcher.writeMany(Array.from({ length: 600 }, (_, n) => row(`b${n}`)));
    await Promise.all([first, second]);
    expect(store.statements.map((statement) => statement.length)).to.deep.equal([600, 600]);
    expect(store.statements[1]![0]).to.equal("b0");
  });

  it("writes a refused group again row by row: the refused row gets the store's error, the others their own result", async () => {
    const { store, batcher } = setUp();
    store.refused.add("2");
    store.missed.add("3");
    const results = await batcher.writeMany(["1", "2", "3"].map(row));
    expect(store.statements).to.deep.equal([["1", "2", "3"], ["1"], ["2"], ["3"]]);
    expect(results[0]).to.equal("applied");
    expect(errorCodeOf(results[1])).to.equal(ErrorCode.Database);
    expect(results[2]).to.equal("fence-missed");
  });

  it("answers every row of a group the outage outlasts with the outage's error, and never rejects", async () => {
    const { clock, store, batcher } = setUp();
    store.outage = new InfrastructureError("connection reset");
    const group = track(batcher.writeMany(["1", "2"].map(row)));
    await clock.advance(LEASE_MS + 5_000);
    await batcher.drain();
    expect(group.error).to.equal(undefined);
    expect(group.result!.map(errorCodeOf)).to.deep.equal([ErrorCode.Infrastructure, ErrorCode.Infrastructure]);
  });
});
