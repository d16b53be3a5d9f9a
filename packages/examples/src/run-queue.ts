// Runs the worker of one queue until no due job is left, then exits: the
// shape of a Kubernetes CronJob's container command.
//
//   DATABASE_URL=postgres://… node packages/examples/dist/src/run-queue.js send-invoice-email
import "reflect-metadata";
import { resolveWorker } from "@stint/core";
import { createCompositionRoot } from "./composition-root";

async function main(queue: string): Promise<number> {
  const app = createCompositionRoot({ connectionString: process.env["DATABASE_URL"] ?? "", schema: process.env["STINT_SCHEMA"] ?? "stint" });
  const stop = new AbortController();
  process.once("SIGTERM", () => stop.abort());
  process.once("SIGINT", () => stop.abort());
  try {
    const worker = resolveWorker(app.container, queue);
    const summary = await worker.start({ signal: stop.signal });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return summary.stoppedBecause === "infrastructure" ? 1 : 0;
  } finally {
    await app.close();
  }
}

main(process.argv[2] ?? "").then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 78;
  },
);
