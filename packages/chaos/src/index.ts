// Public API of @stint/chaos (private): the suite, its scenarios and its harness, for the tests and `npm run chaos`.
export { FULL_PROFILE, SHORT_PROFILE, profileFromEnv } from "./profile";
export type { ChaosProfile } from "./profile";
export { runScenario, runSuite } from "./run-suite";
export type { SuiteOptions } from "./run-suite";
export { resultsTable } from "./report/results-table";
export { ALL_SCENARIOS } from "./scenarios/all-scenarios";
export type { Scenario, ScenarioContext, ScenarioOutcome, ScenarioResult } from "./harness/scenario";
export { Verdict } from "./harness/scenario";
export { ChaosJob, parseChaosTask, CHAOS_ACTIONS } from "./worker/chaos-job";
export type { ChaosTask, ChaosAction } from "./worker/chaos-job";
