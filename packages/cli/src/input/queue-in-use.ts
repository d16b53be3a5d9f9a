import { appJobKinds } from "../app/app-job-kind";
import { configError } from "../cli-error";
import type { CommandContext } from "../command";
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
  const unseen = await queuesNotInDatabase(connection, [queue], false);
  if (unseen.length > 0) throw misspeltQueues(unseen, connection.schema, false, forcing);
}

/** How {@link assertQueuesKnown} looks for queue names, and what its refusal suggests. */
export interface QueueLookup {
  /** Completes "pass --force to …" in the refusal, e.g. "pause anyway". */
  readonly forcing: string;
  /** A queue with a control row (paused, a running cap or a rate limit, even lifted since) counts as known. */
  readonly controls?: boolean;
  /**
   * An app module (`--app`): a queue it registers a worker for counts as
   * known. It is loaded only when the database does not know every queue.
   */
  readonly app?: string | undefined;
}

/**
 * Refuses queues that nothing knows, as {@link assertQueueInUse} does, for
 * the commands that change a queue's controls: a queue is known when it
 * has a job or a schedule, or (as `lookup` says) a control row or a worker
 * in the app module. The refusal is one configuration error (exit 78)
 * naming every unknown queue (and the app's queues, when one was given),
 * thrown before anything is changed.
 *
 * @example
 * ```ts
 * await assertQueuesKnown(context, await context.connect(), ["mail"], { forcing: "pause anyway", controls: true, app: "./dist/stint-app.js" });
 * ```
 */
export async function assertQueuesKnown(context: CommandContext, connection: Connection, queues: readonly string[], lookup: QueueLookup): Promise<void> {
  const controls = lookup.controls ?? false;
  const unseen = await queuesNotInDatabase(connection, queues, controls);
  if (unseen.length === 0) return;
  if (lookup.app === undefined) throw misspeltQueues(unseen, connection.schema, controls, lookup.forcing);
  const appQueues = (await appJobKinds(context, lookup.app)).map((kind) => kind.name);
  const unknown = unseen.filter((queue) => !appQueues.includes(queue));
  if (unknown.length === 0) return;
  const them = unknown.length === 1 ? "it" : "them";
  throw configError(
    `${withoutTrace(unknown, controls)} in schema "${connection.schema}", and ${lookup.app} has no worker for ${them} ` +
      `(known queues: ${[...appQueues].sort().join(", ")}); check the name, or pass --force to ${lookup.forcing}`,
  );
}

/** The queues of `queues` (in order) that have no job, no schedule and, when `controls`, no control row. */
async function queuesNotInDatabase(connection: Connection, queues: readonly string[], controls: boolean): Promise<string[]> {
  const seen = new Set(((await connection.schedules?.listSchedules()) ?? []).map((schedule) => schedule.queue));
  if (controls) for (const entry of await connection.store.listQueueControls()) seen.add(entry.queue);
  const unseen: string[] = [];
  for (const queue of queues) {
    if (seen.has(queue)) continue;
    const [job] = await connection.store.listJobs({ queue, limit: 1 });
    if (job === undefined) unseen.push(queue);
  }
  return unseen;
}

function misspeltQueues(queues: readonly string[], schema: string, controls: boolean, forcing: string): Error {
  const one = queues.length === 1;
  return configError(
    `${withoutTrace(queues, controls)} in schema "${schema}", so ${one ? "it" : "they"} may be misspelt; ` +
      `pass --force to ${forcing}, or --app MODULE to check ${one ? "it" : "them"} against your application's workers`,
  );
}

/** `queue "a" has no jobs and no schedule`, or `queues "a", "b" have no jobs, no schedule and no pause or limit`. */
function withoutTrace(queues: readonly string[], controls: boolean): string {
  const names = queues.map((queue) => JSON.stringify(queue)).join(", ");
  const traces = controls ? "no jobs, no schedule and no pause or limit" : "no jobs and no schedule";
  return queues.length === 1 ? `queue ${names} has ${traces}` : `queues ${names} have ${traces}`;
}
