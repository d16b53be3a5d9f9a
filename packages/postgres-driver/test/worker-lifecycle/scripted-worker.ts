import { createTestSchema, type TestSchema } from "../../src/testing";
import {
  AbstractQueueWorker,
  createSilentLogger,
  defineJob,
  type DeadJobContext,
  type FailureDecision,
  type JobContext,
  type JobDefinition,
  type JobRecord,
  type Logger,
  type JobStore,
  type WorkerOptions,
} from "@stint/core";
import { buildNewJob } from "@stint/core/driver";

/** The payload of the test queue. */
export interface Task {
  readonly n: number;
}

/** The test job kind: three attempts unless a test says otherwise. */
export const TaskJob = defineJob<Task>("task", { maxAttempts: 3 });

/** What a test scripts for its worker. */
export interface Script {
  readonly job?: JobDefinition<Task>;
  readonly process: (item: Task, ctx: JobContext) => Promise<unknown>;
  readonly parse?: (payload: unknown) => Task;
  readonly handleFailure?: (item: Task, error: unknown, ctx: JobContext) => FailureDecision | undefined;
  readonly onDead?: (job: JobRecord, error: Error, ctx: DeadJobContext) => void | Promise<void>;
  /** The worker's logger (default silent). */
  readonly log?: Logger;
}

/**
 * A worker whose handler a test writes inline. It is a real subclass: the
 * base class's lifecycle runs untouched against the real store.
 */
export class ScriptedWorker extends AbstractQueueWorker<Task> {
  readonly job: JobDefinition<Task>;
  readonly #script: Script;

  constructor(store: JobStore, script: Script, options: WorkerOptions = {}) {
    super(store, script.log ?? createSilentLogger(), { backoff: { baseMs: 0, maxMs: 0 }, ...options });
    this.job = script.job ?? TaskJob;
    this.#script = script;
  }

  protected parse(payload: unknown): Task {
    if (this.#script.parse) return this.#script.parse(payload);
    const n = (payload as { n?: unknown } | null)?.n;
    if (typeof n !== "number") throw new Error(`n must be a number, got ${JSON.stringify(n)}`);
    return { n };
  }

  protected processItem(item: Task, ctx: JobContext): Promise<unknown> {
    return this.#script.process(item, ctx);
  }

  protected override handleFailure(item: Task, error: unknown, ctx: JobContext) {
    return this.#script.handleFailure?.(item, error, ctx) ?? super.handleFailure(item, error, ctx);
  }

  protected override onDead(job: JobRecord, error: Error, ctx: DeadJobContext): void | Promise<void> {
    return this.#script.onDead?.(job, error, ctx);
  }
}

/**
 * Registers mocha hooks that give each test a freshly migrated schema;
 * `schema()` is the current test's, `enqueue(n)` adds a task job to it.
 */
export function schemaPerTest(): { readonly schema: () => TestSchema; readonly enqueue: (n: number) => Promise<string> } {
  let current: TestSchema | undefined;
  beforeEach(async () => {
    current = await createTestSchema();
  });
  afterEach(async () => {
    await current?.drop();
  });
  const schema = (): TestSchema => {
    if (current === undefined) throw new Error("no test schema: call schemaPerTest() inside describe");
    return current;
  };
  return { schema, enqueue: async (n) => (await schema().store.enqueue(buildNewJob(TaskJob, { n }))).id };
}

export { deferred } from "../support/deferred";
