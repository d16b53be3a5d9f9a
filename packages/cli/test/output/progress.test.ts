import { expect } from "chai";
import { startProgress } from "../../src/output/progress";
import { CapturedStream } from "../helpers/run-stint";

describe("startProgress", () => {
  it("prints a plain line at most once per interval without a terminal", () => {
    const stream = new CapturedStream(false);
    let now = 0;
    const progress = startProgress(stream, { label: "enqueue q", total: 50_000, unit: "jobs", intervalMs: 2_000, now: () => now });
    progress.update(1_000);
    now = 2_000;
    progress.update(12_000);
    now = 3_000;
    progress.update(13_000);
    progress.stop();
    expect(stream.text).to.equal("enqueue q: 12,000/50,000 jobs (24%)\n");
  });

  it("counts without a total", () => {
    const stream = new CapturedStream(false);
    let now = 0;
    const progress = startProgress(stream, { label: "prune", unit: "jobs deleted", now: () => now });
    now = 5_000;
    progress.update(3_000);
    expect(stream.text).to.equal("prune: 3,000 jobs deleted\n");
  });

  it("draws a bar on a terminal", () => {
    const stream = new CapturedStream(true);
    const progress = startProgress(stream, { label: "retry dead q", total: 1_000, unit: "jobs" });
    progress.update(500);
    progress.stop();
    expect(stream.text).to.include("retry dead q [");
    expect(stream.text).to.include("500/1,000 jobs");
  });
});
