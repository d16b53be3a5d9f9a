import { EventHub } from "./event-hub";

/** `job.enqueued`: the store inserted a job (or found the active job holding its dedupe key). */
export interface JobEnqueuedEvent {
  readonly jobId: string;
  readonly queue: string;
  /** Always 0: no attempt has run yet. */
  readonly attempt: 0;
  /** True when an active job already held the dedupe key; `jobId` is that job's. */
  readonly duplicate: boolean;
  /**
   * True when the job was written in the caller's transaction: it exists
   * only if that transaction commits (the event fires when the insert
   * returns, before the commit).
   */
  readonly inTransaction: boolean;
  /** When the insert returned, on the producer's clock. */
  readonly at: Date;
}

/** Every event a `JobClient` emits, by name. */
export interface ClientEventMap {
  "job.enqueued": JobEnqueuedEvent;
}

/**
 * The events of a `JobClient` (`client.events`).
 *
 * @example
 * ```ts
 * client.events.on("job.enqueued", (event) => console.log(`queued ${event.queue} job ${event.jobId}`));
 * ```
 */
export class ClientEvents extends EventHub<ClientEventMap> {}
