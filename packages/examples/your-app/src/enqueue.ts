// The polyfill tsyringe needs, loaded once before anything else.
import "reflect-metadata";
import { JobClient } from "@stint/core";
import { createApp } from "./app";
import { SendWelcome } from "./send-welcome";

/** Enqueues a `send-welcome` job for the user named on the command line. */
async function main(): Promise<void> {
  const app = createApp({ connectionString: process.env["DATABASE_URL"] ?? "", schema: process.env["STINT_SCHEMA"] ?? "stint" });
  try {
    const client = app.container.resolve(JobClient);
    const { id } = await client.enqueue(SendWelcome, { userId: Number(process.argv[2] ?? 1) });
    console.log(`Enqueued job ${id}`);
  } finally {
    await app.close();
  }
}

void main();
