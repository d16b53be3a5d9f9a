import { Registry } from "prom-client";
import { ConfigError } from "../errors/config-errors";
import type { WorkerEvents } from "../events/worker-events";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import { JobMetrics } from "./job-metrics";
import { registerQueueGauges } from "./queue-gauges-metrics";
import { DEFAULT_TOP_GROUPS, registerGroupGauges } from "./group-gauges-metrics";
import { MAX_GROUPS_LISTED } from "../limits";
import { integerOption } from "../validation/option-checks";

/**
 * Prometheus metrics of a run (`runWorkers({ metrics })`). By default a
 * run serves them at `/metrics` of its health server when it has one;
 * `false` turns them off (no subscriber, no route).
 */
export interface MetricsOptions {
  /**
   * The prom-client registry to add the stint metrics to: pass yours (for
   * example prom-client's global `register`, with `collectDefaultMetrics()`)
   * to serve everything on one endpoint. Default: a registry of the run's own.
   */
  readonly registry?: Registry;
  /**
   * How many groups per queue `stint_group_running_jobs{queue,group}`
   * reports: those with the most running jobs (0 to 1000, default
   * {@link DEFAULT_TOP_GROUPS}); `0` leaves the gauge out. Bounds the
   * gauge's series to the queues times this, however many groups there are.
   */
  readonly topGroups?: number;
}

/** What a page of metrics is: the body and the content type to serve it with. */
export interface MetricsPage {
  readonly contentType: string;
  readonly body: string;
}

/**
 * The metrics of one run: the job counters and histograms fed by `events`,
 * and the database gauges read at each scrape (the queues', and the
 * running jobs of each queue's `topGroups` busiest groups).
 *
 * @example
 * ```ts
 * const metrics = startRunMetrics({ registry: new Registry() }, { store, log, events });
 * const page = await metrics.render();
 * metrics.stop();
 * ```
 */
export function startRunMetrics(
  options: MetricsOptions,
  parts: { readonly store: Pick<JobStore, "readQueueGauges" | "listGroups">; readonly log: Logger; readonly events: WorkerEvents },
): { readonly registry: Registry; render(): Promise<MetricsPage>; stop(): void } {
  const registry = options.registry ?? new Registry();
  if (!(registry instanceof Registry)) throw new ConfigError("metrics.registry", "must be a prom-client Registry");
  const topGroups = integerOption("metrics.topGroups", options.topGroups ?? DEFAULT_TOP_GROUPS, 0, MAX_GROUPS_LISTED);
  const stop = new JobMetrics(registry).subscribe(parts.events);
  registerQueueGauges(registry, parts.store, parts.log);
  if (topGroups > 0) registerGroupGauges(registry, parts.store, topGroups, parts.log);
  return { registry, render: () => renderMetrics(registry), stop };
}

/** `registry`'s exposition in the Prometheus text format. */
export async function renderMetrics(registry: Registry): Promise<MetricsPage> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
