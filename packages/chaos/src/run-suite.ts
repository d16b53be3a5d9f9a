import { coerceError } from "@stint/core/internal";
import type { ChaosProfile } from "./profile";
import { Verdict, type Scenario, type ScenarioResult } from "./harness/scenario";
import { seededRandom } from "@stint/core/internal";

/** Options of {@link runScenario} and {@link runSuite}. */
export interface SuiteOptions {
  readonly connectionString: string;
  readonly profile: ChaosProfile;
  /** Seed of the victims, fates and timings; printed so a run can be repeated. */
  readonly seed: number;
  readonly log?: (line: string) => void;
}

/**
 * Runs one scenario and turns what it measured into a table row. A
 * scenario that throws (the harness itself failed) is a failed row, not a
 * crash of the suite.
 */
export async function runScenario(scenario: Scenario, options: SuiteOptions): Promise<ScenarioResult> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  log(`${scenario.id}. ${scenario.title} (${options.profile.name})`);
  let result: ScenarioResult;
  try {
    const outcome = await scenario.run({
      connectionString: options.connectionString,
      profile: options.profile,
      random: seededRandom(options.seed * 100 + scenario.id),
      log,
    });
    const { verdict, ...figures } = outcome;
    result = {
      id: scenario.id,
      title: scenario.title,
      ...figures,
      passed: verdict.failures.length === 0,
      failures: verdict.failures,
      figures: verdict.figures,
      durationMs: Date.now() - started,
    };
  } catch (thrown) {
    const verdict = new Verdict();
    verdict.check(false, `the scenario could not run: ${coerceError(thrown).stack ?? coerceError(thrown).message}`);
    result = {
      id: scenario.id,
      title: scenario.title,
      jobs: 0,
      faults: "-",
      lost: 0,
      duplicates: 0,
      reExecutions: 0,
      passed: false,
      failures: verdict.failures,
      figures: [],
      durationMs: Date.now() - started,
    };
  }
  log(
    `  ${result.passed ? "pass" : "FAIL"} in ${(result.durationMs / 1_000).toFixed(1)} s: jobs ${result.jobs}, faults ${result.faults}, lost ${result.lost}, ` +
      `duplicates ${result.duplicates}, re-executions ${result.reExecutions}; ${result.figures.join("; ")}`,
  );
  for (const failure of result.failures) log(`  FAILED: ${failure}`);
  return result;
}

/** Runs `scenarios` one after the other (they share the machine's two cores, not their schemas). */
export async function runSuite(scenarios: readonly Scenario[], options: SuiteOptions): Promise<readonly ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) results.push(await runScenario(scenario, options));
  return results;
}
