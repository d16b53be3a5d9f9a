import { expect } from "chai";
import { misspeltVariableWarnings } from "../../src/settings/misspelt-variables";

describe("misspeltVariableWarnings", () => {
  it("suggests the setting a near miss meant, with its queue suffix", () => {
    expect(misspeltVariableWarnings({ STINT_CONCURENCY: "4", STINT_SHUTDOWN_TIMOUT_AI_SUMMARY: "1m", STINT_PERFETCH: "0" })).to.deep.equal([
      "STINT_CONCURENCY is not a stint setting and is ignored; did you mean STINT_CONCURRENCY?",
      "STINT_PERFETCH is not a stint setting and is ignored; did you mean STINT_PREFETCH?",
      "STINT_SHUTDOWN_TIMOUT_AI_SUMMARY is not a stint setting and is ignored; did you mean STINT_SHUTDOWN_TIMEOUT_AI_SUMMARY?",
    ]);
  });

  it("says there is no per-queue log level or schedule grace", () => {
    expect(misspeltVariableWarnings({ STINT_LOG_LEVEL_AI_SUMMARY: "debug", STINT_SCHEDULE_GRACE_REPORT: "2d" })).to.deep.equal([
      "STINT_LOG_LEVEL_AI_SUMMARY is ignored: the log level is one per process, set by STINT_LOG_LEVEL",
      "STINT_SCHEDULE_GRACE_REPORT is ignored: the schedule grace is one per process, set by STINT_SCHEDULE_GRACE",
    ]);
  });

  it("suggests the schedule grace for a near miss of it", () => {
    expect(misspeltVariableWarnings({ STINT_SCHEDULE_GRAZE: "2d" })).to.deep.equal([
      "STINT_SCHEDULE_GRAZE is not a stint setting and is ignored; did you mean STINT_SCHEDULE_GRACE?",
    ]);
  });

  it("stays quiet about settings, per-queue settings of any queue, the other stint variables, unset ones and unrelated names", () => {
    const env = {
      STINT_CONCURRENCY: "4",
      STINT_LEASE_SOME_OTHER_QUEUE: "2m",
      STINT_APP: "@acme/jobs",
      STINT_SCHEMA: "stint",
      STINT_LOG_LEVEL: "info",
      STINT_SCHEDULE_GRACE: "2d",
      STINT_LOG_FORMAT: "json",
      STINT_BENCH_MAX_RUNNING: "5000",
      STINT_CONCURENCY: "",
      PATH: "/usr/bin",
    };
    expect(misspeltVariableWarnings(env)).to.deep.equal([]);
  });
});
