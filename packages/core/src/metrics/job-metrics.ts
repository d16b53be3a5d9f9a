import type { Counter, Histogram, Registry } from "prom-client";
import type { WorkerEvents } from "../events/worker-events";
import { counterIn, histogramIn } from "./metric-names";

/** The `outcome` label of `stint_jobs_total`: one per attempt, as the run summary counts them. */
export type JobOutcomeLabel = "succeeded" | "retried" | "dead" | "snoozed" | "released" | "lease_lost" | "write_failed";

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
  readonly #jobs: Counter<"queue" | "outcome">;
  readonly #duration: Histogram<"queue" | "outcome">;
  readonly #wait: Histogram<"queue">;
  readonly #queues = new Map<string, QueueSeries>();

  constructor(registry: Registry) {
    this.#jobs = counterIn(registry, { name: "stint_jobs_total", help: "Attempts recorded, by queue and outcome.", labelNames: ["queue", "outcome"] });
    this.#duration = histogramIn(registry, {
      name: "stint_job_duration_seconds",
      help: "How long attempts ran, by queue and outcome (succeeded or failed).",
      labelNames: ["queue", "outcome"],
    });
    this.#wait = histogramIn(registry, { name: "stint_job_wait_seconds", help: "From a job's run_at to the start of its attempt.", labelNames: ["queue"] });
  }

  /** Starts counting the events of `events`; returns the function that stops it. */
  subscribe(events: WorkerEvents): () => void {
    const count = (queue: string, outcome: JobOutcomeLabel): void => this.#of(queue).count(outcome);
    const offs = [
      events.on("job.started", (event) => this.#of(event.queue).wait.observe(event.waitMs / 1_000)),
      events.on("job.succeeded", (event) => {
        const queue = this.#of(event.queue);
        queue.count("succeeded");
        queue.succeeded.observe(event.durationMs / 1_000);
      }),
      events.on("job.failed", (event) => {
        const queue = this.#of(event.queue);
        if (event.willRetry) queue.count("retried");
        queue.failed.observe(event.durationMs / 1_000);
      }),
      events.on("job.dead", (event) => count(event.queue, "dead")),
      events.on("job.snoozed", (event) => count(event.queue, "snoozed")),
      events.on("job.released", (event) => count(event.queue, "released")),
      events.on("job.leaseLost", (event) => count(event.queue, "lease_lost")),
      events.on("job.writeFailed", (event) => count(event.queue, "write_failed")),
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  /** The labelled series of one queue, made at its first event: label sets are not hashed on every event. */
  #of(queue: string): QueueSeries {
    let series = this.#queues.get(queue);
    if (series === undefined) {
      const counters = new Map<JobOutcomeLabel, { inc(): void }>();
      const jobs = this.#jobs;
      series = {
        wait: this.#wait.labels(queue),
        succeeded: this.#duration.labels(queue, "succeeded"),
        failed: this.#duration.labels(queue, "failed"),
        count(outcome) {
          let counter = counters.get(outcome);
          if (counter === undefined) counters.set(outcome, (counter = jobs.labels(queue, outcome)));
          counter.inc();
        },
      };
      this.#queues.set(queue, series);
    }
    return series;
  }
}

/** One queue's series. */
interface QueueSeries {
  readonly wait: { observe(seconds: number): void };
  readonly succeeded: { observe(seconds: number): void };
  readonly failed: { observe(seconds: number): void };
  count(outcome: JobOutcomeLabel): void;
}
