import { configError } from "../cli-error";
import type { Connection } from "../connection/open-connection";

/**
 * Refuses to enqueue (or schedule) on a queue the database has never seen, which is
 * most often a misspelt name: a queue is in use when the jobs table holds
 * at least one job of it (in any state) or a schedule enqueues to it.
 * Otherwise a configuration error (exit 78) says why and how to go on
 * (`--force`, or `--app` so that the application's job kinds decide);
 * `forcing` completes "pass --force to …".
 * Looking for a queue that has no jobs may read the whole jobs table once.
 *
 * @example
 * ```ts
 * await assertQueueInUse(await context.connect(), "send-invoice");
 * ```
 */
export async function assertQueueInUse(connection: Connection, queue: string, forcing = "enqueue to a new queue"): Promise<void> {
  const schedules = (await connection.schedules?.listSchedules()) ?? [];
  if (schedules.some((schedule) => schedule.queue === queue)) return;
  const [job] = await connection.store.listJobs({ queue, limit: 1 });
  if (job !== undefined) return;
  throw configError(
    `queue "${queue}" has no jobs and no schedule in schema "${connection.schema}", so it may be misspelt; ` +
      `pass --force to ${forcing}, or --app MODULE to check it against your application's workers`,
  );
}
