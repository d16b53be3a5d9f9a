import { expect } from "chai";
import { summarizeRun } from "../../src/runtime/run-report";
import { ExitCode } from "../../src/runtime/exit-codes";
import type { RunSummary, StopReason } from "../../src/worker/run-summary";

function summary(queue: string, stoppedBecause: StopReason, claimed = 1): RunSummary {
  return {
    queue,
    workerId: `${queue}@w`,
    claimed,
    succeeded: claimed,
    retried: 0,
    snoozed: 0,
    dead: 0,
    leaseLost: 0,
    cancelled: 0,
    writeFailed: 0,
    released: 0,
    durationMs: 5,
    stoppedBecause,
  };
}

describe("summarizeRun", () => {
  const run = (mode: "once" | "loop", reasons: StopReason[], preparationError?: string, preparationFailure?: "config" | "infrastructure") =>
    summarizeRun({
      mode,
      summaries: reasons.map((reason, i) => summary(`q${i}`, reason)),
      durationMs: 10,
      maintenance: [],
      ...(preparationError ? { preparationError } : {}),
      ...(preparationFailure ? { preparationFailure } : {}),
    });

  it("exits 0 when every queue drained or reached a budget", () => {
    expect(run("once", ["drained", "max-jobs", "max-runtime"]).exitCode).to.equal(ExitCode.Ok);
  });

  it("exits 130 when a once run was interrupted, 0 when a loop was stopped", () => {
    expect(run("once", ["drained", "signal"])).to.include({ exitCode: ExitCode.Interrupted, stoppedBecause: "signal" });
    expect(run("loop", ["signal", "signal"]).exitCode).to.equal(ExitCode.Ok);
  });

  it("exits 69 on an infrastructure failure, during the run or before it", () => {
    expect(run("once", ["drained", "infrastructure"]).exitCode).to.equal(ExitCode.Infrastructure);
    expect(run("once", [], "connect ECONNREFUSED")).to.include({ exitCode: ExitCode.Infrastructure, error: "connect ECONNREFUSED" });
  });

  it("exits 78 when a worker or the preparation met a setup problem, whatever else stopped the others", () => {
    expect(run("once", ["drained", "config", "infrastructure"])).to.include({ exitCode: ExitCode.Config, stoppedBecause: "config" });
    expect(run("loop", ["signal", "config"]).exitCode).to.equal(ExitCode.Config);
    expect(run("once", ["drained"], 'schema "stint" is not migrated', "config")).to.include({
      exitCode: ExitCode.Config,
      error: 'schema "stint" is not migrated',
    });
    expect(run("once", ["drained"], "connect ECONNREFUSED", "infrastructure").exitCode).to.equal(ExitCode.Infrastructure);
  });

  it("adds up the workers' counts", () => {
    expect(run("once", ["drained", "drained", "drained"]).totals).to.include({ claimed: 3, succeeded: 3 });
  });
});
