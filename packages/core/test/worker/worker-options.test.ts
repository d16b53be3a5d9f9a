import { expect } from "chai";
import { resolveWorkerOptions } from "../../src/worker/worker-options";
import { ConfigError } from "../../src/errors/config-errors";

describe("resolveWorkerOptions", () => {
  it("fills in defaults and derives the heartbeat from the lease", () => {
    const options = resolveWorkerOptions({ leaseMs: 90_000 });
    expect(options).to.include({
      concurrency: 5,
      leaseMs: 90_000,
      heartbeatIntervalMs: 30_000,
      shutdownTimeoutMs: 30_000,
      onDeadTimeoutMs: 10_000,
      durableClaims: false,
      batchSize: 1,
      batchWaitMs: 0,
    });
    expect(resolveWorkerOptions({ durableClaims: true })).to.include({ durableClaims: true });
    expect(Object.isFrozen(options)).to.equal(true);
  });

  it("sizes the prefetch buffer by pace up to 500 unless a fixed size is given", () => {
    expect(resolveWorkerOptions({})).to.include({ prefetch: 500, adaptivePrefetch: true });
    expect(resolveWorkerOptions({ prefetch: "auto", concurrency: 800 })).to.include({ prefetch: 800, adaptivePrefetch: true });
    expect(resolveWorkerOptions({ prefetch: 0 })).to.include({ prefetch: 0, adaptivePrefetch: false });
    expect(resolveWorkerOptions({ prefetch: 40 })).to.include({ prefetch: 40, adaptivePrefetch: false });
  });

  it("names each invalid option in its message", () => {
    const cases: Array<[object, string]> = [
      [{ concurrency: 0 }, "`concurrency`"],
      [{ concurrency: 2.5 }, "`concurrency`"],
      [{ leaseMs: 50 }, "`leaseMs`"],
      [{ shutdownTimeoutMs: -1 }, "`shutdownTimeoutMs`"],
      [{ onDeadTimeoutMs: 0 }, "`onDeadTimeoutMs`"],
      [{ onDeadTimeoutMs: 3_600_001 }, "`onDeadTimeoutMs`"],
      [{ backoff: { baseMs: "1s" } }, "`backoff.baseMs`"],
      [{ workerId: "" }, "`workerId`"],
      [{ prefetch: -1 }, "`prefetch`"],
      [{ prefetch: "lots" }, "`prefetch`"],
      [{ random: 0.5 }, "`random`"],
      [{ durableClaims: "yes" }, "`durableClaims`"],
      [{ batchSize: 0 }, "`batchSize`"],
      [{ batchSize: 1_001 }, "`batchSize`"],
      [{ batchWaitMs: -1 }, "`batchWaitMs`"],
      [{ concurency: 4 }, "`options.concurency`"],
    ];
    for (const [input, name] of cases) {
      expect(() => resolveWorkerOptions(input), name).to.throw(ConfigError, name);
    }
  });
});
