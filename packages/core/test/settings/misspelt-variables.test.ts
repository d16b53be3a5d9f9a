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

  it("says there is no per-queue log level", () => {
    expect(misspeltVariableWarnings({ STINT_LOG_LEVEL_AI_SUMMARY: "debug" })).to.deep.equal([
      "STINT_LOG_LEVEL_AI_SUMMARY is ignored: the log level is one per process, set by STINT_LOG_LEVEL",
    ]);
  });

  it("stays quiet about settings, per-queue settings of any queue, the other stint variables, unset ones and unrelated names", () => {
    const env = {
      STINT_CONCURRENCY: "4",
      STINT_LEASE_SOME_OTHER_QUEUE: "2m",
      STINT_APP: "@acme/jobs",
      STINT_SCHEMA: "stint",
      STINT_LOG_LEVEL: "info",
      STINT_LOG_FORMAT: "json",
      STINT_BENCH_MAX_RUNNING: "5000",
      STINT_CONCURENCY: "",
      PATH: "/usr/bin",
    };
    expect(misspeltVariableWarnings(env)).to.deep.equal([]);
  });
});
