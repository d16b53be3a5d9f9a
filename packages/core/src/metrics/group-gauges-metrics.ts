import type { Gauge, Registry } from "prom-client";
import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import { gaugeIn } from "./metric-names";

/** How many groups per queue `stint_group_running_jobs` reports by default. */
export const DEFAULT_TOP_GROUPS = 10;

/**
 * `stint_group_running_jobs{queue,group}`: the running jobs of each
 * queue's busiest groups and serial lines (see `EnqueueOptions.group`),
 * at most `topGroups` per queue, those with the most running jobs, read at
 * scrape time with one `listGroups({ runningOnly: true })` statement (its
 * cost is bounded by the running jobs, however many groups wait). A group
 * that stops running drops out of the scrape, so the series stay bounded
 * by the queues times `topGroups`; a serial line's label is its serial
 * key. When the database does not answer, the scrape leaves it out and
 * logs a warning.
 *
 * @example
 * ```ts
 * registerGroupGauges(registry, store, 10, log);
 * ```
 */
export function registerGroupGauges(registry: Registry, store: Pick<JobStore, "listGroups">, topGroups: number, log?: Logger): void {
  const running: Gauge<"queue" | "group"> = gaugeIn(registry, {
    name: "stint_group_running_jobs",
    help: `Running jobs of each queue's busiest groups and serial lines (at most ${topGroups} per queue, most running first), read at scrape time.`,
    labelNames: ["queue", "group"],
    collect: async () => {
      const groups = await store.listGroups({ limit: topGroups, runningOnly: true }).catch((thrown: unknown) => {
        log?.warn(`Could not read the group gauges for /metrics: ${coerceError(thrown).message}`);
        return undefined;
      });
      running.reset();
      for (const group of groups ?? []) running.set({ queue: group.queue, group: group.key }, group.running);
    },
  });
}
