import type { JobStore } from "../../store/job-store";
import { claimOne, type ConformanceContext } from "./conformance-harness";

/** Claims the one job of `queue` and leaves it `running` or finishes it as `ending`. */
export async function finishAs<Tx>(store: JobStore<Tx>, queue: string, ending: "running" | "succeeded" | "dead" | "cancelled"): Promise<void> {
  const claimed = await claimOne(store, queue, "w1");
  if (ending === "succeeded") await store.completeJobs({ workerId: "w1", jobs: [{ ...claimed, resultJson: null, durationMs: 1 }] });
  else if (ending === "dead") await store.markJobsDead({ workerId: "w1", jobs: [{ ...claimed, failure: { message: "gave up", code: null } }] });
  else if (ending === "cancelled") await store.cancelJob({ id: claimed.id });
}

/** Waits until the store's clock is past job `id`'s start-by deadline (one ms more: times read back are rounded down). */
export async function pastDeadline<Tx>(ctx: ConformanceContext<Tx>, id: string): Promise<void> {
  const job = await ctx.store().getJob({ id });
  if (job?.startBy == null) throw new Error(`job ${id} has no start-by deadline`);
  await ctx.harness().waitUntilPast(new Date(job.startBy.getTime() + 1));
}
