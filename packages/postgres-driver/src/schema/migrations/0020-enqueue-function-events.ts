import { enqueueFunctionStatement } from "./enqueue-function-statement";
import type { Migration } from "./migration";

/**
 * Version 20: `enqueue(…)` (version 16) tells job-event listeners of the
 * job it inserts, as `JobClient.enqueue` does: an `enqueued` event through
 * `notify_job_events` (version 17), sent at commit. A dedupe hit, and a
 * queued holder that `replace` or `debounce` updated, insert nothing and
 * send nothing. The signature, the checks and everything else are version
 * 16's; the function is replaced in place, so grants and its comment stay.
 *
 * The function runs with its caller's rights: a caller that may not read
 * `job_event_listeners` (an application role given only what an enqueue
 * needs) enqueues as before and sends no event, rather than failing. As in
 * every statement that notifies, with no live listener row it costs one
 * look at that table and no NOTIFY.
 */
export const enqueueFunctionEventsMigration: Migration = Object.freeze({
  version: 20,
  name: "enqueue-function-events",
  statements: (schema: string) => [enqueueFunctionStatement(schema, { events: true })],
});
