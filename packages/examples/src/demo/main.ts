// Entry point of `npm start`: runs the demo against DATABASE_URL and exits with its status.
// The report goes to standard output, the workers' logs to standard error.
import "reflect-metadata";
import { ExitCode, readLogSettings } from "@stint/core";
import { dashboardHint } from "./dashboard-hint";
import { runDemo } from "./run-demo";

async function main(): Promise<number> {
  try {
    readLogSettings(process.env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return ExitCode.Config;
  }
  const connectionString = process.env["DATABASE_URL"];
  if (connectionString === undefined || connectionString === "") {
    process.stderr.write("Set DATABASE_URL, or run `npm start`, which starts a throwaway PostgreSQL for the demo.\n");
    return ExitCode.Config;
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const schema = process.env["STINT_DEMO_SCHEMA"] ?? "stint_demo";
  const result = await runDemo({ connectionString, schema, signal: stop.signal });
  const throwaway = process.env["STINT_THROWAWAY_POSTGRES"] === "1";
  process.stdout.write(`\n${dashboardHint({ schema, throwaway }).join("\n")}\n`);
  return result.exitCode;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`The demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
