import { Gauge, type Registry } from "prom-client";

/** Seconds, from 5 ms to an hour: jobs run from milliseconds to many minutes. */
export const SECONDS_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]);

/** A gauge whose values `collect` sets at scrape time, replacing one of that name in `registry` (a second run in one process). */
export function gaugeIn<L extends string>(
  registry: Registry,
  config: { name: string; help: string; labelNames: readonly L[]; collect: () => Promise<void> },
): Gauge<L> {
  const existing = registry.getSingleMetric(config.name) as Gauge<L> | undefined;
  if (existing !== undefined) registry.removeSingleMetric(config.name);
  return new Gauge({ ...config, registers: [registry] });
}
