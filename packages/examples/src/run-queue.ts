// Runs the worker of one queue with `worker.start()` until no due job is
// left, prints its run summary and exits with the code `stint run <queue>
// --once` gives the same summary: the shape of a Kubernetes CronJob's
// container command, without the CLI.
//
//   DATABASE_URL=postgres://… [STINT_SCHEMA=stint] node packages/examples/dist/src/run-queue.js send-invoice-email
//
// Exit codes (core's ExitCode): 0 drained, 130 stopped by SIGTERM or SIGINT
// (a second one exits at once), 69 the database stayed unreachable, 78 an
// unknown queue, no DATABASE_URL or a schema not migrated, 1 anything else.
import "reflect-metadata";
import { handleStopSignals, LOGGER, resolveWorker, summarizeRun } from "@stint/core";
import { createCompositionRoot } from "./composition-root";
import { exitWith, requiredDatabaseUrl } from "./process-main";

async function main(queue: string): Promise<number> {
  const app = createCompositionRoot({ connectionString: requiredDatabaseUrl(process.env), schema: process.env["STINT_SCHEMA"] ?? "stint" });
  const stop = handleStopSignals(app.container.resolve(LOGGER));
  try {
    const worker = resolveWorker(app.container, queue);
    const summary = await worker.start({ signal: stop.signal });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return summarizeRun({ mode: "once", summaries: [summary], durationMs: summary.durationMs, maintenance: [] }).exitCode;
  } finally {
    stop.dispose();
    await app.close();
  }
}

exitWith(() => main(process.argv[2] ?? ""));
