import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { buildNewJob } from "../../src/job/enqueue-options";
import { defineJob } from "../../src/job/job-definition";
import type { JobRecord } from "../../src/job/job-record";
import { createSilentLogger } from "../../src/logging/create-logger";
import type { Logger } from "../../src/logging/logger";
import type { JobStore } from "../../src/store/job-store";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import type { JobContext } from "../../src/worker/job-context";
import type { WorkerOptions } from "../../src/worker/worker-options";

/** The job kind of the worker tests on the in-memory store. */
export const Task = defineJob<{ n: number }>("task", { maxAttempts: 3 });

/** What a {@link TaskWorker} does with each job. */
export type Handler = (item: { n: number }, ctx: JobContext) => Promise<unknown>;

/** A worker whose handler each test writes; it notes the deaths `onDead` hears of. */
export class TaskWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Task;
  readonly deaths: string[] = [];

  constructor(
    store: JobStore,
    private readonly handler: Handler,
    options: WorkerOptions,
    log: Logger = createSilentLogger(),
  ) {
    super(store, log, { random: () => 0.5, ...options });
  }

  protected parse(payload: unknown): { n: number } {
    return payload as { n: number };
  }

  protected processItem(item: { n: number }, ctx: JobContext): Promise<unknown> {
    return this.handler(item, ctx);
  }

  protected override onDead(job: JobRecord): void {
    this.deaths.push(job.id);
  }
}

/** A promise that tests open by hand. */
export function gate(): { readonly opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Waits for `signal` to abort, then throws its reason, as a handler honouring `ctx.signal` does. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
}

/** Enqueues `count` tasks numbered from 0. */
export function enqueueTasks(store: JobStore, count: number): Promise<unknown> {
  return store.enqueueMany(Array.from({ length: count }, (_, n) => buildNewJob(Task, { n })));
}

/** How many tasks are in each state, leaving out the states none is in. */
export async function taskStates(store: JobStore): Promise<Record<string, number>> {
  const [counts] = await store.countByQueue({ queues: [Task.name] });
  return Object.fromEntries(Object.entries(counts!.counts).filter(([, count]) => count > 0));
}

/** A fresh in-memory store on a manual clock, with the task helpers bound to it. */
export function freshTasks(): {
  clock: ManualClock;
  store: InMemoryJobStore;
  enqueue: (count: number) => Promise<unknown>;
  states: () => Promise<Record<string, number>>;
} {
  const clock = new ManualClock();
  const store = new InMemoryJobStore({ clock });
  return { clock, store, enqueue: (count) => enqueueTasks(store, count), states: () => taskStates(store) };
}
