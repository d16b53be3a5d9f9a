import { describeJobStoreConformance } from "../../src/testing/conformance/job-store-conformance";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import type { MemoryTransaction } from "../../src/testing/memory/memory-transaction";

describeJobStoreConformance<MemoryTransaction>("InMemoryJobStore", async () => {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const store = new InMemoryJobStore({ clock });
  return {
    store,
    withTransaction: (work) => store.transaction(work),
    // The store's clock is the test's: moved past the instant instead of waited for.
    waitUntilPast: (instant) => clock.set(Math.max(clock.now(), instant.getTime() + 1)),
    now: () => clock.now(),
    close: async () => undefined,
  };
});
