import { createSilentLogger, resolveWorkers } from "@stint/core";
import { createCompositionRoot } from "../../src/composition-root";

/** A queue of the example application and its job kind's per-attempt timeout. */
export interface ExampleQueue {
  readonly queue: string;
  /** `null` when the kind has no timeout. */
  readonly timeoutMs: number | null;
}

/**
 * The queues the example workers claim from, read from the workers the
 * composition root registers (`EXAMPLE_WORKERS`). Nothing connects: the
 * pool opens on the first query, and there is none.
 */
export async function exampleQueues(): Promise<readonly ExampleQueue[]> {
  const app = createCompositionRoot({ connectionString: "postgres://unused@127.0.0.1:1/unused", logger: { logger: createSilentLogger() } });
  try {
    return resolveWorkers(app.container).map((worker) => ({ queue: worker.queue, timeoutMs: worker.job.defaults.timeoutMs }));
  } finally {
    await app.close();
  }
}
