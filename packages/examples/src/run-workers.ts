// Runs the app's workers for the queues named on the command line, the way
// `stint run <queue…> --app @stint/examples/app` does, from code: the same
// composition root, `runFromContainer` (lease rescue, schedules, the
// maintenance leader in loop mode, the STINT_* settings variables), the same
// signal handling, one JSON report line and the same exit code.
//
//   DATABASE_URL=postgres://… node packages/examples/dist/src/run-workers.js send-invoice-email ai-summary   # loop, until SIGTERM
//   DATABASE_URL=postgres://… node packages/examples/dist/src/run-workers.js send-invoice-email --once
import "reflect-metadata";
import { handleStopSignals, LOGGER, runFromContainer } from "@stint/core";
import { createApp } from "./app";
import { exitWith, requiredDatabaseUrl } from "./process-main";

async function main(args: readonly string[]): Promise<number> {
  const once = args.includes("--once");
  const queues = args.filter((arg) => arg !== "--once");
  const app = createApp({ connectionString: requiredDatabaseUrl(process.env), schema: process.env["STINT_SCHEMA"] ?? "stint" });
  const stop = handleStopSignals(app.container.resolve(LOGGER));
  try {
    const report = await runFromContainer(app.container, {
      queues,
      mode: once ? "once" : "loop",
      signal: stop.signal,
    });
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return report.exitCode;
  } finally {
    stop.dispose();
    await app.close();
  }
}

exitWith(() => main(process.argv.slice(2)));
