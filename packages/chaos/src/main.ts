import "reflect-metadata";
import { readLogSettings } from "@stint/core";
import { killAllChildren } from "./harness/child-process";
import { stopAllOwnServers } from "./harness/own-postgres";
import { profileFromEnv } from "./profile";
import { resultsTable } from "./report/results-table";
import { runSuite } from "./run-suite";
import { ALL_SCENARIOS } from "./scenarios/all-scenarios";

/**
 * `npm run chaos`: runs the chaos suite against `DATABASE_URL` (the root
 * script starts a throwaway PostgreSQL when it is unset) and prints the
 * table. `CHAOS_PROFILE=short` runs the CI sizes, `CHAOS_SCENARIOS=1,5`
 * a subset, `CHAOS_SEED=n` repeats a run's random choices. Exits 1 when a
 * scenario failed. The worker processes log at `STINT_LOG_LEVEL` (default
 * warn), as JSON lines on their stderr, which the harness reads.
 */
async function main(): Promise<number> {
  // Checked here so that a bad value stops the suite, not every worker process it starts.
  readLogSettings(process.env);
  const connectionString = process.env["DATABASE_URL"];
  if (!connectionString) throw new Error("DATABASE_URL must be set (npm run chaos starts a throwaway PostgreSQL when it is not)");
  const profile = profileFromEnv();
  const seed = Number(process.env["CHAOS_SEED"] ?? Math.floor(Math.random() * 1_000_000));
  const only = process.env["CHAOS_SCENARIOS"]?.split(",").map((id) => Number(id.trim()));
  const scenarios = only === undefined ? ALL_SCENARIOS : ALL_SCENARIOS.filter((scenario) => only.includes(scenario.id));
  const started = Date.now();
  const log = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  log(`chaos suite: ${scenarios.length} scenarios, profile ${profile.name}, seed ${seed}`);
  const results = await runSuite(scenarios, { connectionString, profile, seed, log });
  log("");
  log(resultsTable(results));
  log("");
  const failed = results.filter((result) => !result.passed).length;
  log(
    `${results.length - failed} of ${results.length} scenarios passed in ${((Date.now() - started) / 1_000).toFixed(1)} s (profile ${profile.name}, seed ${seed})`,
  );
  return failed === 0 ? 0 : 1;
}

// Ctrl-C: take down the worker processes and any server the suite started, then exit.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAllChildren();
    void stopAllOwnServers().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
