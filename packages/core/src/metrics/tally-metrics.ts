import type { Metric, Registry } from "prom-client";
import { ConfigError } from "../errors/config-errors";

/** One exported sample, in the shape prom-client's registry formats. */
interface Sample {
  readonly metricName: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}

/** What prom-client's registry reads from a metric at scrape time. */
interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly aggregator: "sum";
  readonly values: readonly Sample[];
}

/**
 * The base of the per-job metrics: a metric whose hot path is a field
 * increment on a series object the caller keeps, and whose labels are
 * joined, hashed and formatted only when the registry is scraped.
 * prom-client's own `Counter` and `Histogram` hash the label set on every
 * `inc` and `observe`; a worker that drains tens of thousands of jobs a
 * second records three per job (see docs/benchmarks.md, Figures behind the
 * code).
 *
 * Registered in a prom-client `Registry` like any metric, so the exposition
 * is prom-client's: `registry.metrics()` and `getMetricsAsJSON()` serve it.
 */
abstract class TallyMetric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  abstract readonly type: "counter" | "histogram";
  readonly aggregator = "sum";
  readonly #labelNames: readonly L[];
  readonly #series = new Map<string, { readonly labels: Readonly<Record<L, string>>; readonly series: S }>();

  protected constructor(config: { readonly name: string; readonly help: string; readonly labelNames: readonly L[] }) {
    this.name = config.name;
    this.help = config.help;
    this.#labelNames = config.labelNames;
  }

  /** The series of one label set: look it up once, then record on it. */
  series(labels: Readonly<Record<L, string>>): S {
    const key = this.#labelNames.map((name) => labels[name]).join("\u0000");
    let entry = this.#series.get(key);
    if (entry === undefined) {
      entry = { labels: { ...labels }, series: this.newSeries() };
      this.#series.set(key, entry);
    }
    return entry.series;
  }

  /** What the registry serves (`registry.metrics()`, `getMetricsAsJSON()`). */
  get(): Promise<ScrapedMetric> {
    const values: Sample[] = [];
    for (const { labels, series } of this.#series.values()) this.samplesOf(series, labels, values);
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** Zeroes every series (`registry.resetMetrics()`); series objects stay valid. */
  reset(): void {
    for (const { series } of this.#series.values()) this.resetSeries(series);
  }

  protected abstract newSeries(): S;
  protected abstract resetSeries(series: S): void;
  protected abstract samplesOf(series: S, labels: Readonly<Record<string, string>>, into: Sample[]): void;
}

/** A monotonic count: `series(labels).inc()`. */
export interface CountSeries {
  inc(): void;
}

class CountCell implements CountSeries {
  value = 0;
  inc(): void {
    this.value += 1;
  }
}

/**
 * A Prometheus counter whose increments are a field update.
 *
 * @example
 * ```ts
 * const jobs = TallyCounter.in(registry, { name: "stint_jobs_total", help: "…", labelNames: ["queue", "outcome"] });
 * const succeeded = jobs.series({ queue: "email", outcome: "succeeded" });
 * succeeded.inc();
 * ```
 */
export class TallyCounter<L extends string> extends TallyMetric<L, CountSeries> {
  readonly type = "counter";

  /** Public, where the base's constructor is protected. */
  public constructor(config: { readonly name: string; readonly help: string; readonly labelNames: readonly L[] }) {
    super(config);
  }

  /** The counter `config.name` already in `registry` (a second run in one process shares it), or a new one there. */
  static in<L extends string>(
    registry: Registry,
    config: { readonly name: string; readonly help: string; readonly labelNames: readonly L[] },
  ): TallyCounter<L> {
    return registeredIn(registry, config.name, TallyCounter, () => new TallyCounter(config)) as TallyCounter<L>;
  }

  protected newSeries(): CountSeries {
    return new CountCell();
  }

  protected resetSeries(series: CountSeries): void {
    (series as CountCell).value = 0;
  }

  protected samplesOf(series: CountSeries, labels: Readonly<Record<string, string>>, into: Sample[]): void {
    into.push({ metricName: this.name, labels, value: (series as CountCell).value });
  }
}

/** Observations of one label set: `series(labels).observe(seconds)`. */
export interface ObserveSeries {
  observe(value: number): void;
}

class BucketCells implements ObserveSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const { bounds } = this;
    for (let at = 0; at < bounds.length; at += 1) {
      if (value <= bounds[at]!) {
        this.counts[at]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

/**
 * A Prometheus histogram whose observations are a bucket search and three
 * field updates; buckets are cumulated at scrape time.
 *
 * @example
 * ```ts
 * const wait = TallyHistogram.in(registry, { name: "stint_job_wait_seconds", help: "…", labelNames: ["queue"], buckets: [0.1, 1, 10] });
 * wait.series({ queue: "email" }).observe(0.25);
 * ```
 */
export class TallyHistogram<L extends string> extends TallyMetric<L, ObserveSeries> {
  readonly type = "histogram";
  readonly #bounds: readonly number[];

  constructor(config: { readonly name: string; readonly help: string; readonly labelNames: readonly L[]; readonly buckets: readonly number[] }) {
    super(config);
    this.#bounds = Object.freeze([...config.buckets]);
  }

  /** The histogram `config.name` already in `registry`, or a new one there. */
  static in<L extends string>(
    registry: Registry,
    config: { readonly name: string; readonly help: string; readonly labelNames: readonly L[]; readonly buckets: readonly number[] },
  ): TallyHistogram<L> {
    return registeredIn(registry, config.name, TallyHistogram, () => new TallyHistogram(config)) as TallyHistogram<L>;
  }

  protected newSeries(): ObserveSeries {
    return new BucketCells(this.#bounds);
  }

  protected resetSeries(series: ObserveSeries): void {
    const cells = series as BucketCells;
    cells.counts.fill(0);
    cells.sum = 0;
    cells.count = 0;
  }

  protected samplesOf(series: ObserveSeries, labels: Readonly<Record<string, string>>, into: Sample[]): void {
    const cells = series as BucketCells;
    let cumulative = 0;
    cells.bounds.forEach((bound, at) => {
      cumulative += cells.counts[at]!;
      into.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
    });
    into.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: cells.count });
    into.push({ metricName: `${this.name}_sum`, labels, value: cells.sum });
    into.push({ metricName: `${this.name}_count`, labels, value: cells.count });
  }
}

/** The metric `name` of `registry` when it is a `kind`; otherwise `make()`'s, registered there. */
function registeredIn<M extends object>(registry: Registry, name: string, kind: abstract new (...args: never[]) => M, make: () => M): M {
  const existing: unknown = registry.getSingleMetric(name);
  if (existing instanceof kind) return existing;
  if (existing !== undefined) throw new ConfigError("metrics.registry", `already has a metric named ${name} that stint did not register`);
  const metric = make();
  // The registry reads a metric through name, help, type, aggregator, get() and reset(), which a TallyMetric has.
  registry.registerMetric(metric as unknown as Metric);
  return metric;
}
