import { describeJobStoreConformance } from "../../src/testing/conformance/job-store-conformance";
import type { ScheduleStoreHarness } from "../../src/testing/conformance/conformance-harness";
import { describeScheduleStoreConformance } from "../../src/testing/conformance/schedule-store-conformance";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import type { MemoryTransaction } from "../../src/testing/memory/memory-transaction";

async function memoryHarness(): Promise<ScheduleStoreHarness<MemoryTransaction>> {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const store = new InMemoryJobStore({ clock });
  return {
    store,
    withTransaction: (work) => store.transaction(work),
    // The store's clock is the test's: moved past the instant instead of waited for.
    waitUntilPast: (instant) => clock.set(Math.max(clock.now(), instant.getTime() + 1)),
    now: () => clock.now(),
    passScheduleTime: (ms) => clock.advance(ms),
    close: async () => undefined,
  };
}

describeJobStoreConformance("InMemoryJobStore", memoryHarness);
describeScheduleStoreConformance("InMemoryJobStore", memoryHarness);
