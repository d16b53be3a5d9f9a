import { createSilentLogger, resolveWorkers, type TunableSettings } from "@stint/core";
import { createCompositionRoot } from "../../src/composition-root";

/** A queue of the example application, its job kind's per-attempt timeout and the settings its worker's constructor passes. */
export interface ExampleQueue {
  readonly queue: string;
  /** `null` when the kind has no timeout. */
  readonly timeoutMs: number | null;
  /** What the worker's constructor sets (its code values, for the settings resolution). */
  readonly code: Partial<TunableSettings>;
  /** The job kind's dead-letter queue, or `null`. */
  readonly deadLetterQueue: string | null;
}

/**
 * The queues the example workers claim from, read from the workers the
 * composition root registers (`EXAMPLE_WORKERS`). Nothing connects: the
 * pool opens on the first query, and there is none.
 */
export async function exampleQueues(): Promise<readonly ExampleQueue[]> {
  const app = createCompositionRoot({ connectionString: "postgres://unused@127.0.0.1:1/unused", logger: { logger: createSilentLogger() } });
  try {
    return resolveWorkers(app.container).map((worker) => {
      const { concurrency, prefetch, leaseMs, shutdownTimeoutMs } = worker.givenOptions;
      const code = Object.fromEntries(Object.entries({ concurrency, prefetch, leaseMs, shutdownTimeoutMs }).filter(([, value]) => value !== undefined));
      return { queue: worker.queue, timeoutMs: worker.job.defaults.timeoutMs, code, deadLetterQueue: worker.job.deadLetterQueue ?? null };
    });
  } finally {
    await app.close();
  }
}
