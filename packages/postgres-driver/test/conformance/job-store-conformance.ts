import type { JobStore } from "@stint/core";
import { describeClaimConformance } from "./claim-conformance";
import { describeDeadHooksConformance } from "./dead-hooks-conformance";
import type { ConformanceContext, JobStoreHarness, JobStoreHarnessFactory } from "./conformance-harness";
import { describeEffectsConformance } from "./effects-conformance";
import { describeEnqueueConformance } from "./enqueue-conformance";
import { describeFenceConformance } from "./fence-conformance";
import { describeGaugesConformance } from "./gauges-conformance";
import { describeHistoryConformance } from "./history-conformance";
import { describeListingConformance } from "./listing-conformance";
import { describeOperationsConformance } from "./operations-conformance";
import { describeRetentionConformance } from "./retention-conformance";

export type { JobStoreHarness, JobStoreHarnessFactory } from "./conformance-harness";

/**
 * The behaviour every `JobStore` must show, as a mocha suite: claim order
 * and limits, exclusivity under racing claimers, lease expiry and rescue,
 * the owner/attempt fence on every write after a claim, dedupe keys under
 * concurrency, transactional and batch enqueue, the operator calls, the
 * metrics gauges, listing,
 * retention and bulk retry, effects run once per key, completion in the
 * job's own transaction, attempt history, meta and progress, and the
 * pending `onDead` hook every death leaves.
 *
 * The factory is called once for the suite; each test uses queues of its own.
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
  describe(`${name} conforms to JobStore`, function () {
    this.timeout(60_000);
    let harness: JobStoreHarness<Tx> | undefined;
    let queues = 0;
    const ctx: ConformanceContext<Tx> = {
      harness: () => {
        if (harness === undefined) throw new Error("the conformance harness was not created");
        return harness;
      },
      store: (): JobStore<Tx> => ctx.harness().store,
      freshQueue: () => `conformance-${(queues += 1)}`,
    };

    before(async () => {
      harness = await factory();
    });
    after(async () => {
      await harness?.close();
    });

    describeEnqueueConformance(ctx);
    describeClaimConformance(ctx);
    describeFenceConformance(ctx);
    describeOperationsConformance(ctx);
    describeGaugesConformance(ctx);
    describeListingConformance(ctx);
    describeRetentionConformance(ctx);
    describeEffectsConformance(ctx);
    describeHistoryConformance(ctx);
    describeDeadHooksConformance(ctx);
  });
}
