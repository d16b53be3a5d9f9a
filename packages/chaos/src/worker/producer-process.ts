import "reflect-metadata";
import { createInterface } from "node:readline";
import { JobClient, registerLogger, type EnqueueResult } from "@stint/core";
import { coerceError } from "@stint/core/internal";
import { registerPostgresDriver } from "@stint/postgres-driver";
import { container as rootContainer } from "tsyringe";
import { ChaosJob } from "./chaos-job";

/** What the harness passes a producer process in `CHAOS_PRODUCER` (JSON). */
export interface ChaosProducerSettings {
  /** Enqueue jobs with the dedupe keys `key-0` … `key-<keys−1>`. */
  readonly keys: number;
  /** `0`: one `enqueue` per key; otherwise `enqueueMany` batches of this size. */
  readonly batchSize: number;
  /** Calls in flight at once. */
  readonly concurrency: number;
  /** Seeds the order in which this process goes through the keys. */
  readonly seed: number;
}

/** What a producer prints when done: the id it got for each key, and every error that surfaced. */
export interface ChaosProducerReport {
  readonly event: "done";
  readonly ids: readonly string[];
  readonly errors: readonly string[];
  readonly inserted: number;
}

/**
 * A producer process for the dedupe scenario: connects, prints
 * `{"event":"ready"}`, waits for a `go` line on standard input (so that all
 * producers start at once), enqueues one job per dedupe key through
 * `JobClient`, in its own shuffled order, and prints a {@link ChaosProducerReport}.
 */
async function main(): Promise<void> {
  const settings = JSON.parse(requireEnv("CHAOS_PRODUCER")) as ChaosProducerSettings;
  const container = rootContainer.createChildContainer();
  registerLogger(container, { defaultLevel: "warn" });
  const driver = registerPostgresDriver(container, {
    connectionString: requireEnv("DATABASE_URL"),
    schema: requireEnv("STINT_SCHEMA"),
    maxConnections: settings.concurrency,
    controlConnections: 0,
  });
  const client = container.resolve(JobClient);
  try {
    await driver.store.ping();
    process.stdout.write(`${JSON.stringify({ event: "ready", pid: process.pid })}\n`);
    await goSignal();
    const ids: string[] = new Array<string>(settings.keys).fill("");
    const errors: string[] = [];
    let inserted = 0;
    const order = shuffled(settings.keys, settings.seed);
    const size = Math.max(1, settings.batchSize);
    const chunks: number[][] = [];
    for (let i = 0; i < order.length; i += size) chunks.push(order.slice(i, i + size));
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        try {
          const results: readonly EnqueueResult[] =
            settings.batchSize === 0
              ? [await client.enqueue(ChaosJob, task(chunk[0]!), { dedupeKey: `key-${chunk[0]}` })]
              : await client.enqueueMany(
                  ChaosJob,
                  chunk.map((seq) => ({ payload: task(seq), options: { dedupeKey: `key-${seq}` } })),
                );
          results.forEach((result, index) => {
            ids[chunk[index]!] = result.id;
            if (!result.duplicate) inserted += 1;
          });
        } catch (thrown) {
          errors.push(coerceError(thrown).message);
        }
      }
    };
    await Promise.all(Array.from({ length: settings.concurrency }, lane));
    const report: ChaosProducerReport = { event: "done", ids, errors, inserted };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await container.dispose();
    await driver.close();
  }
}

function task(seq: number): { seq: number; action: "sleep"; ms: number } {
  return { seq, action: "sleep", ms: 0 };
}

/** 0 … n−1 in an order drawn from `seed` (a small xorshift, so each producer differs). */
function shuffled(n: number, seed: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  let state = (seed * 2_654_435_761) >>> 0 || 1;
  for (let i = n - 1; i > 0; i -= 1) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    const j = state % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

function goSignal(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on("line", (line) => {
      if (line.trim() === "go") {
        lines.close();
        resolve();
      }
    });
  });
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

main().then(
  () => setTimeout(() => process.exit(0), 1_000).unref(),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
