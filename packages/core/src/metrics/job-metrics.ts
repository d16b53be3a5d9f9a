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
    const count = (queue: string, outcome: JobOutcomeLabel): void => this.#jobs.inc({ queue, outcome });
    const offs = [
      events.on("job.started", (event) => this.#wait.observe({ queue: event.queue }, event.waitMs / 1_000)),
      events.on("job.succeeded", (event) => {
        count(event.queue, "succeeded");
        this.#duration.observe({ queue: event.queue, outcome: "succeeded" }, event.durationMs / 1_000);
      }),
      events.on("job.failed", (event) => {
        if (event.willRetry) count(event.queue, "retried");
        this.#duration.observe({ queue: event.queue, outcome: "failed" }, event.durationMs / 1_000);
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
}
