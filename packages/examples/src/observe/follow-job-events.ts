import { JOB_EVENTS, type JobEvent, type JobEventGap, type JobEventSubscription } from "@stint/core";
import type { DependencyContainer } from "tsyringe";

/**
 * Follows the invoice e-mails that any process sends: prints one line per
 * job event of the `send-invoice-email` queue, whichever worker process
 * caused it, and says when events may have been missed (the caller then
 * re-reads the jobs it shows). A producer, an API server or an operator's
 * script does this next to its own work; `registerPostgresDriver` puts the
 * event source into the container.
 *
 * @example
 * ```ts
 * const subscription = await followInvoiceEmails(container, (line) => console.log(line));
 * // … later:
 * await subscription.close();
 * ```
 */
export function followInvoiceEmails(container: DependencyContainer, print: (line: string) => void): Promise<JobEventSubscription> {
  const events = container.resolve(JOB_EVENTS);
  return events.subscribe(
    { queues: ["send-invoice-email"] }, // leave out for every queue; `types: ["succeeded", "dead"]` narrows further
    {
      onEvent(event: JobEvent) {
        switch (event.type) {
          case "progress":
            print(`job ${event.jobId}: ${JSON.stringify(event.progress)}`);
            break;
          case "dead":
            print(`job ${event.jobId} gave up after attempt ${event.attempt} (${event.errorCode ?? "no code"})`);
            break;
          default:
            print(`${event.at.toISOString()} ${event.type} ${event.queue} ${event.jobId} attempt ${event.attempt}`);
        }
      },
      onGap(gap: JobEventGap) {
        // Events may have been missed: re-read what you show (store.getJob, countByQueue, …).
        print(`job events: ${gap.reason}; re-reading`);
      },
    },
  );
}
