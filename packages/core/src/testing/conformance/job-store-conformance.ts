import type { JobStore } from "../../store/job-store";
import { describeClaimConformance } from "./claim-conformance";
import type { ConformanceContext, JobStoreHarness, JobStoreHarnessFactory } from "./conformance-harness";
import { describeControlsConformance } from "./controls-conformance";
import { describeDeadHooksConformance } from "./dead-hooks-conformance";
import { describeDeadLetterConformance } from "./dead-letter-conformance";
import { describeEffectsConformance } from "./effects-conformance";
import { describeEnqueueConformance } from "./enqueue-conformance";
import { describeEnqueueWindowsConformance } from "./enqueue-windows-conformance";
import { describeFenceConformance } from "./fence-conformance";
import { describeFinishedHistoryConformance } from "./finished-history-conformance";
import { describeGaugesConformance } from "./gauges-conformance";
import { describeGroupsConformance } from "./groups-conformance";
import { describeHistoryConformance } from "./history-conformance";
import { describeJobWritesConformance } from "./job-writes-conformance";
import { describeListingConformance } from "./listing-conformance";
import { describeGroupReadsConformance } from "./group-reads-conformance";
import { describeOperationsConformance } from "./operations-conformance";
import { describeRetentionConformance } from "./retention-conformance";
import { afterTests, beforeTests, suite } from "./test-runner";
import { describeWorkflowConformance } from "./workflow-conformance";

/**
 * The behaviour every `JobStore` must show, as a suite of the test
 * runner's `describe` and `it` (mocha; jest or vitest with globals): claim
 * order and limits, exclusivity under racing claimers, lease expiry and
 * rescue, the owner/attempt fence on every write after a claim, dedupe keys
 * under concurrency, unique windows, start-by deadlines and follow-up runs,
 * transactional and batch enqueue, the operator calls,
 * the queue controls, groups (turns, even shares, the per-group cap) and
 * serial lines (one job at a time, in order, held by a dead job), the metrics gauges, listing, retention and bulk
 * retry, effects run once per key, completion in the job's own
 * transaction, attempt history, meta and progress, a handler's meta
 * updates and log lines (fenced, capped), the pending `onDead`
 * hook and the dead-letter copy every death leaves, the history of finished jobs (readable by
 * every read until retention removes it with its attempts, never listed
 * twice, active again under its id when retried), and workflows (steps
 * blocked until the steps they wait for succeeded, a failure cancelling
 * the steps after it, retries resuming, steps added by a running step). Assertions use
 * `node:assert`.
 *
 * The factory is called once for the suite, in its first hook; each test
 * uses queues of its own. Each test may take up to a minute (the largest
 * enqueues 10,000 jobs in one call).
 *
 * @example
 * ```ts
 * describeJobStoreConformance("PostgresJobStore", async () => {
 *   const test = await createTestSchema();
 *   return { store: test.store, withTransaction: …, waitUntilPast: …, close: () => test.drop() };
 * });
 * ```
 */
export function describeJobStoreConformance<Tx>(name: string, factory: JobStoreHarnessFactory<Tx>): void {
  suite(`${name} conforms to JobStore`, () => {
    let harness: JobStoreHarness<Tx> | undefined;
    let queues = 0;
    const ctx: ConformanceContext<Tx> = {
      harness: () => {
        if (harness === undefined) throw new Error("the conformance harness was not created");
        return harness;
      },
      store: (): JobStore<Tx> => ctx.harness().store,
      freshQueue: () => `conformance-${(queues += 1)}`,
      now: () => ctx.harness().now?.() ?? Date.now(),
    };

    beforeTests(async () => {
      harness = await factory();
    });
    afterTests(async () => {
      await harness?.close();
    });

    describeEnqueueConformance(ctx);
    describeEnqueueWindowsConformance(ctx);
    describeClaimConformance(ctx);
    describeFenceConformance(ctx);
    describeOperationsConformance(ctx);
    describeControlsConformance(ctx);
    describeGroupsConformance(ctx);
    describeGaugesConformance(ctx);
    describeListingConformance(ctx);
    describeGroupReadsConformance(ctx);
    describeRetentionConformance(ctx);
    describeEffectsConformance(ctx);
    describeHistoryConformance(ctx);
    describeJobWritesConformance(ctx);
    describeFinishedHistoryConformance(ctx);
    describeDeadHooksConformance(ctx);
    describeDeadLetterConformance(ctx);
    describeWorkflowConformance(ctx);
  });
}
