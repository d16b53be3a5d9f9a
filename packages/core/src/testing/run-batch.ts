import { ConfigError } from "../errors/config-errors";
import { ShutdownError } from "../errors/job-errors";
import type { PayloadOf } from "../job/job-definition";
import type { AbstractQueueWorker } from "../worker/abstract-queue-worker";
import { BatchLease } from "../worker/batch-lease";
import type { RunJobOptions, WorkerResult } from "./run-job";
import type { RunJobResult } from "./run-job-result";
import { WorkerTestRun } from "./worker-test-run";

/**
 * Runs one batch of `worker` on `payloads` and says how each job ended,
 * with no database: each payload becomes a claimed attempt in an
 * `InMemoryJobStore`, and the worker's real batch wiring runs them through
 * one `processBatch` call, whatever the worker's `batchSize` — each
 * payload parsed (one that does not parse is dead at once), `ctx.succeed`
 * and `ctx.fail` recording a job as the batch runs, the rest settled by
 * what `processBatch` returns or throws, `handleFailure` per job, the
 * shortest timeout, the leases, and `onDead` once a death is recorded.
 * The results are in the order of `payloads`; `options` apply to every job.
 *
 * @example
 * ```ts
 * const [first, second] = await runBatch(worker, [{ to: "a@example.com" }, { to: "not an address" }]);
 * assert.equal(first.status, "succeeded");
 * assert.equal(second.status, "dead");
 * ```
 */
export async function runBatch<W extends AbstractQueueWorker<any, any>>(
  worker: W,
  payloads: readonly PayloadOf<W["job"]>[],
  options: RunJobOptions = {},
): Promise<RunJobResult<WorkerResult<W>>[]> {
  if (!Array.isArray(payloads) || payloads.length === 0) throw new ConfigError("payloads", "must be a non-empty array");
  const run = new WorkerTestRun(worker, options, "runBatch");
  const { leases, batches } = run.pipeline;
  const claimed = [];
  for (const payload of payloads) claimed.push(await run.startJob(payload));
  const now = (options.clock ?? worker.options.clock).now();
  const deadline = leases.deadlineOf(now);
  const lease = new BatchLease(0, deadline);
  for (const job of claimed) lease.add(job, 0, deadline);
  leases.holdBatch(lease);
  const release = (): void => {
    for (const attempt of lease.attempts) attempt.signal.abort(new ShutdownError("runBatch's signal aborted"));
  };
  if (options.signal?.aborted) release();
  options.signal?.addEventListener("abort", release, { once: true });
  run.pipeline.start();
  try {
    const results = await batches.run(lease);
    await run.settle();
    return await Promise.all(claimed.map((job, index) => run.resultOf<WorkerResult<W>>(job, results[index]!)));
  } finally {
    options.signal?.removeEventListener("abort", release);
    await run.stop();
  }
}
