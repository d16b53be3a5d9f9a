import type { QueueControls } from "@stint/core";
import type { RecentThroughput } from "@stint/postgres-driver";
import { expect } from "chai";
import type { DashboardSources } from "../../src/data/dashboard-sources";
import { readOverview, THROUGHPUT_CACHE_MS, THROUGHPUT_STALE_MS } from "../../src/data/overview-data";

/** A throughput read that finishes when the test says so. */
interface HeldRead {
  readonly succeeded: number;
  finish(): void;
  fail(): void;
}

function throughput(succeeded: number): RecentThroughput {
  return {
    windowMs: 3_600_000,
    bucketMs: 300_000,
    scanned: succeeded,
    coversWindow: true,
    oldestScannedAgeMs: null,
    queues: [{ queue: "mail", succeeded, buckets: new Array<number>(12).fill(0) }],
  };
}

/** Sources whose throughput reads wait for the test; every other read answers at once. */
function heldSources(): { sources: DashboardSources; reads: HeldRead[] } {
  const reads: HeldRead[] = [];
  const browser = {
    readQueueGauges: () => Promise.resolve([]),
    readRecentThroughput: () =>
      new Promise<RecentThroughput>((resolve, reject) => {
        const succeeded = (reads.length + 1) * 100;
        reads.push({ succeeded, finish: () => resolve(throughput(succeeded)), fail: () => reject(new Error("the database went away")) });
      }),
  };
  const store = { listQueueControls: (): Promise<readonly QueueControls[]> => Promise.resolve([]) };
  return { sources: { browser, store } as unknown as DashboardSources, reads };
}

const succeededOf = async (overview: ReturnType<typeof readOverview>) => (await overview).queues.find((row) => row.queue === "mail")?.succeededLastHour;

describe("the overview's throughput, read in the background once it is a few seconds old", () => {
  it("waits for the first read only, then answers with the last one while a single newer read runs", async () => {
    const { sources, reads } = heldSources();
    let now = 1_000_000;
    const clock = { now: () => now };
    const first = readOverview(sources, clock);
    expect(reads).to.have.lengthOf(1);
    reads[0]!.finish();
    expect(await succeededOf(first)).to.equal(100);

    now += THROUGHPUT_CACHE_MS - 1;
    expect(await succeededOf(readOverview(sources, clock))).to.equal(100);
    expect(reads, "still fresh: no read").to.have.lengthOf(1);

    now += 1;
    // Stale: both calls answer at once with the last figures, and share the one read they started.
    expect(await succeededOf(readOverview(sources, clock))).to.equal(100);
    expect(await succeededOf(readOverview(sources, clock))).to.equal(100);
    expect(reads).to.have.lengthOf(2);
    reads[1]!.finish();
    await Promise.resolve();
    expect(await succeededOf(readOverview(sources, clock))).to.equal(200);
    expect(reads).to.have.lengthOf(2);
  });

  it("keeps the last figures when a background read fails, and tries again on the next call", async () => {
    const { sources, reads } = heldSources();
    let now = 5_000_000;
    const clock = { now: () => now };
    const first = readOverview(sources, clock);
    reads[0]!.finish();
    await first;
    now += THROUGHPUT_CACHE_MS;
    expect(await succeededOf(readOverview(sources, clock))).to.equal(100);
    reads[1]!.fail();
    await Promise.resolve();
    await Promise.resolve();
    expect(await succeededOf(readOverview(sources, clock))).to.equal(100);
    expect(reads, "a new read after the failed one").to.have.lengthOf(3);
  });

  it("waits for a new read once the last one is older than THROUGHPUT_STALE_MS, or when asked for fresh figures", async () => {
    const { sources, reads } = heldSources();
    let now = 9_000_000;
    const clock = { now: () => now };
    const first = readOverview(sources, clock);
    reads[0]!.finish();
    await first;
    now += THROUGHPUT_STALE_MS;
    const late = readOverview(sources, clock);
    expect(reads).to.have.lengthOf(2);
    reads[1]!.finish();
    expect(await succeededOf(late)).to.equal(200);
    const fresh = readOverview(sources, { ...clock, throughputMaxAgeMs: 0 });
    expect(reads).to.have.lengthOf(3);
    reads[2]!.finish();
    expect(await succeededOf(fresh)).to.equal(300);
  });
});
