import type { Registry } from "prom-client";
import type { WorkerEvents } from "../events/worker-events";
import { SECONDS_BUCKETS } from "./metric-names";
import { TallyCounter, TallyHistogram, type CountSeries, type ObserveSeries } from "./tally-metrics";

/** The `outcome` label of `stint_jobs_total`: one per attempt, as the run summary counts them. */
export type JobOutcomeLabel = "succeeded" | "retried" | "dead" | "snoozed" | "released" | "lease_lost" | "cancelled" | "write_failed";

/**
 * The per-job metrics, fed by a subscriber of worker events:
 * `stint_jobs_total{queue,outcome}` (one per recorded attempt; a dead job's
 * last failure counts as `dead`, not `retried`),
 * `stint_job_duration_seconds{queue,outcome}` (how long attempts that ran
 * took; outcome `succeeded` or `failed`) and `stint_job_wait_seconds{queue}`
 * (from `run_at` to the start of the attempt).
 *
 * @example
 * ```ts
 * const unsubscribe = new JobMetrics(registry).subscribe(worker.events);
 * ```
 */
export class JobMetrics {
  readonly #jobs: TallyCounter<"queue" | "outcome">;
  readonly #duration: TallyHistogram<"queue" | "outcome">;
  readonly #wait: TallyHistogram<"queue">;
  readonly #queues = new Map<string, QueueSeries>();

  constructor(registry: Registry) {
    this.#jobs = TallyCounter.in(registry, { name: "stint_jobs_total", help: "Attempts recorded, by queue and outcome.", labelNames: ["queue", "outcome"] });
    this.#duration = TallyHistogram.in(registry, {
      name: "stint_job_duration_seconds",
      help: "How long attempts ran, by queue and outcome (succeeded or failed).",
      labelNames: ["queue", "outcome"],
      buckets: SECONDS_BUCKETS,
    });
    this.#wait = TallyHistogram.in(registry, {
      name: "stint_job_wait_seconds",
      help: "From a job's run_at to the start of its attempt.",
      labelNames: ["queue"],
      buckets: SECONDS_BUCKETS,
    });
  }

  /** Starts counting the events of `events`; returns the function that stops it. */
  subscribe(events: WorkerEvents): () => void {
    const offs = [
      events.on("job.started", (event) => this.#of(event.queue).wait.observe(event.waitMs / 1_000)),
      events.on("job.succeeded", (event) => {
        const queue = this.#of(event.queue);
        queue.count("succeeded").inc();
        queue.succeeded.observe(event.durationMs / 1_000);
      }),
      events.on("job.failed", (event) => {
        const queue = this.#of(event.queue);
        if (event.willRetry) queue.count("retried").inc();
        queue.failed.observe(event.durationMs / 1_000);
      }),
      events.on("job.dead", (event) => this.#of(event.queue).count("dead").inc()),
      events.on("job.snoozed", (event) => this.#of(event.queue).count("snoozed").inc()),
      events.on("job.released", (event) => this.#of(event.queue).count("released").inc()),
      events.on("job.leaseLost", (event) => this.#of(event.queue).count("lease_lost").inc()),
      events.on("job.cancelled", (event) => this.#of(event.queue).count("cancelled").inc()),
      events.on("job.writeFailed", (event) => this.#of(event.queue).count("write_failed").inc()),
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  /** The series of one queue, made at its first event: an event costs a map lookup and field updates. */
  #of(queue: string): QueueSeries {
    let series = this.#queues.get(queue);
    if (series === undefined) {
      const counters = new Map<JobOutcomeLabel, CountSeries>();
      const jobs = this.#jobs;
      series = {
        wait: this.#wait.series({ queue }),
        succeeded: this.#duration.series({ queue, outcome: "succeeded" }),
        failed: this.#duration.series({ queue, outcome: "failed" }),
        count(outcome) {
          let counter = counters.get(outcome);
          if (counter === undefined) counters.set(outcome, (counter = jobs.series({ queue, outcome })));
          return counter;
        },
      };
      this.#queues.set(queue, series);
    }
    return series;
  }
}

/** One queue's series. */
interface QueueSeries {
  readonly wait: ObserveSeries;
  readonly succeeded: ObserveSeries;
  readonly failed: ObserveSeries;
  count(outcome: JobOutcomeLabel): CountSeries;
}
