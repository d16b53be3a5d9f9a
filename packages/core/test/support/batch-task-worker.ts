import { createSilentLogger } from "../../src/logging/create-logger";
import type { JobStore } from "../../src/store/job-store";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import type { BatchContext, BatchEntry } from "../../src/worker/batch-context";
import type { JobContext } from "../../src/worker/job-context";
import type { WorkerOptions } from "../../src/worker/worker-options";
import { Task } from "./task-worker";

/** What a {@link BatchTaskWorker} does with each batch. */
export type BatchHandler = (entries: readonly BatchEntry<{ n: number }>[], ctx: BatchContext<{ n: number }>) => Promise<void>;

/** A batch worker whose `processBatch` each test writes; its `parse` refuses a payload whose `n` is not a number. */
export class BatchTaskWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Task;
  readonly batches: number[][] = [];

  constructor(
    store: JobStore,
    private readonly handler: BatchHandler,
    options: WorkerOptions,
  ) {
    super(store, createSilentLogger(), { random: () => 0.5, ...options });
  }

  protected parse(payload: unknown): { n: number } {
    const { n } = payload as { n?: unknown };
    if (typeof n !== "number") throw new Error("n must be a number");
    return { n };
  }

  protected processItem(_item: { n: number }, _ctx: JobContext): Promise<unknown> {
    return Promise.reject(new Error("a batch worker's processItem is not called by these tests"));
  }

  protected override processBatch(entries: readonly BatchEntry<{ n: number }>[], ctx: BatchContext<{ n: number }>): Promise<void> {
    this.batches.push(entries.map((entry) => entry.item.n));
    return this.handler(entries, ctx);
  }
}
