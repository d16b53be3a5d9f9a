import type { Gauge, Registry } from "prom-client";
import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { JobStore, QueueGauges } from "../store/job-store";
import { gaugeIn } from "./metric-names";

/** The `state` label of `stint_jobs`: the states a scrape reads (never the succeeded history). */
const GAUGE_STATES = ["blocked", "queued", "failed", "running", "dead"] as const;

/**
 * The database gauges, read at scrape time with one `readQueueGauges`
 * statement shared by all three: `stint_jobs{queue,state}` (states
 * `blocked` — workflow steps waiting for others —, `queued`, `failed` —
 * retry scheduled —, `running` and `dead`; succeeded
 * and cancelled jobs are not counted), `stint_jobs_due{queue}` and
 * `stint_queue_oldest_due_age_seconds{queue}` (0 when nothing is due).
 * When the database does not answer, the scrape leaves the three out and
 * logs a warning; the rest of the scrape is served.
 *
 * @example
 * ```ts
 * registerQueueGauges(registry, store, log);
 * console.log(await registry.metrics());
 * ```
 */
export function registerQueueGauges(registry: Registry, store: Pick<JobStore, "readQueueGauges">, log?: Logger): void {
  let reading: Promise<readonly QueueGauges[] | undefined> | undefined;
  /** One statement per scrape: the three gauges' collects run together and share it. */
  const read = (): Promise<readonly QueueGauges[] | undefined> => {
    reading ??= store
      .readQueueGauges()
      .catch((thrown: unknown) => {
        log?.warn(`Could not read the queue gauges for /metrics: ${coerceError(thrown).message}`);
        return undefined;
      })
      .finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  const fill =
    <L extends string>(gauge: () => Gauge<L>, set: (gauge: Gauge<L>, row: QueueGauges) => void) =>
    async (): Promise<void> => {
      const rows = await read();
      gauge().reset();
      for (const row of rows ?? []) set(gauge(), row);
    };
  const jobs: Gauge<"queue" | "state"> = gaugeIn(registry, {
    name: "stint_jobs",
    help: "Jobs by queue and state, read from the database at scrape time (succeeded and cancelled jobs are not counted).",
    labelNames: ["queue", "state"],
    collect: fill(
      () => jobs,
      (gauge, row) => {
        for (const state of GAUGE_STATES) gauge.set({ queue: row.queue, state }, row[state]);
      },
    ),
  });
  const due: Gauge<"queue"> = gaugeIn(registry, {
    name: "stint_jobs_due",
    help: "Jobs queued or failed whose run_at has passed: waiting for a worker now.",
    labelNames: ["queue"],
    collect: fill(
      () => due,
      (gauge, row) => gauge.set({ queue: row.queue }, row.due),
    ),
  });
  const oldest: Gauge<"queue"> = gaugeIn(registry, {
    name: "stint_queue_oldest_due_age_seconds",
    help: "Age of the oldest due job (the queue lag), 0 when none is due.",
    labelNames: ["queue"],
    collect: fill(
      () => oldest,
      (gauge, row) => gauge.set({ queue: row.queue }, (row.oldestDueAgeMs ?? 0) / 1_000),
    ),
  });
}
