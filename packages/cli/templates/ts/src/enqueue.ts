// The polyfill tsyringe needs, loaded before anything else.
import "reflect-metadata";
import { JobClient } from "@stint/core";
import { createApp } from "./app";
import { SendWelcome } from "./jobs/send-welcome";

/** Enqueues one `send-welcome` job for the user id given on the command line: `npm run enqueue -- 42`. */
async function main(): Promise<void> {
  const connectionString = process.env["DATABASE_URL"];
  if (connectionString === undefined) throw new Error("set DATABASE_URL to your PostgreSQL, e.g. postgres://app@localhost:5432/app");
  const app = createApp({ connectionString, schema: process.env["STINT_SCHEMA"] ?? "stint" });
  try {
    const { id } = await app.container.resolve(JobClient).enqueue(SendWelcome, { userId: Number(process.argv[2] ?? 1) });
    console.log(`Enqueued job ${id}`);
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
