import { badParameter, DashboardErrorCode, RequestRefused } from "../http/request-refused";
import type { DashboardSources } from "./dashboard-sources";

/**
 * Longest queue name the dashboard reads or acts on. Longer than the
 * naming rule's 128: a queue written by SQL may break the rule, and the
 * dashboard must still list it and act on it (every read and write binds
 * the name as a parameter, so any text is safe).
 */
export const MAX_DASHBOARD_QUEUE_LENGTH = 512;

/**
 * A queue name from a request: any non-empty text of at most
 * {@link MAX_DASHBOARD_QUEUE_LENGTH} characters without control
 * characters, else a 400 naming `field`.
 *
 * @example
 * ```ts
 * checkedQueueName("billing / eu west"); // "billing / eu west"
 * checkedQueueName("a\nb");              // throws a 400
 * ```
 */
export function checkedQueueName(text: string, field = "queue"): string {
  // eslint-disable-next-line no-control-regex
  if (text.length === 0 || text.length > MAX_DASHBOARD_QUEUE_LENGTH || /[\u0000-\u001f\u007f-\u009f]/.test(text)) {
    throw badParameter(field, `must be a queue name of 1 to ${MAX_DASHBOARD_QUEUE_LENGTH} characters without control characters`);
  }
  return text;
}

/**
 * Checks that `queue` exists: it has controls set or at least one job,
 * waiting or finished (two index probes), else a 404 naming it.
 *
 * @example
 * ```ts
 * await assertQueueExists(sources, "billing / eu west");
 * ```
 */
export async function assertQueueExists(sources: Pick<DashboardSources, "store" | "browser">, queue: string): Promise<void> {
  const [jobs, controls] = await Promise.all([sources.browser.countJobsUpTo({ queue, cap: 1 }), sources.store.listQueueControls()]);
  if (jobs === 0 && !controls.some((entry) => entry.queue === queue)) {
    throw new RequestRefused(DashboardErrorCode.NotFound, `There is no queue named ${JSON.stringify(queue)}: it has no jobs and no controls.`);
  }
}
