import { errorCodeOf, ErrorCode, type Logger } from "@stint/core";
import { MAX_BATCH_SIZE, type WaitingJobState } from "@stint/core/driver";
import { badParameter, DashboardErrorCode, RequestRefused } from "../http/request-refused";
import type { DashboardSources } from "./dashboard-sources";
import { noSuchJob } from "./job-detail-data";
import { readWorkflow } from "./workflow-data";
import { assertQueueExists, checkedQueueName } from "./queue-name";

/** Who asks for an action, for the log. */
export interface Actor {
  /** `token:1a2b3c4d`, `user:alice` or `anonymous`. */
  readonly who: string;
  readonly remoteAddress: string | undefined;
}

/** Dead jobs retried per statement by "retry all dead". */
export const RETRY_DEAD_BATCH = 500;
/** The most "retry all dead" retries in one request. */
export const MAX_RETRY_DEAD = MAX_BATCH_SIZE;
/** The most "cancel waiting" cancels in one request (1,000 per statement, see `QueueAdmin.cancelWaiting`). */
export const MAX_CANCEL_WAITING = MAX_BATCH_SIZE;

/** What "cancel waiting" may cancel: jobs no worker holds. Running jobs are cancelled one by one, from their page. */
const WAITING_STATES: readonly (readonly WaitingJobState[])[] = [["queued", "failed"], ["queued"], ["failed"]];

/**
 * The states of a "cancel waiting" request (`states=queued,failed`, the
 * default; `queued`; `failed`), or a 400 naming the field.
 */
export function waitingStates(text: string | null): readonly WaitingJobState[] {
  const states = WAITING_STATES.find((candidate) => candidate.join(",") === (text ?? "queued,failed"));
  if (states === undefined) throw badParameter("states", "must be queued, failed or queued,failed");
  return states;
}

/**
 * The dashboard's writes: each checks its target, calls the store method
 * the CLI's command calls, and logs who did what at `info` with the
 * fields `action`, `who`, `remoteAddress` and `jobId` or `queue`.
 *
 * @example
 * ```ts
 * const actions = new DashboardActions(sources, log);
 * await actions.retryJob("812", { who: "user:alice", remoteAddress: "127.0.0.1" });
 * ```
 */
export class DashboardActions {
  readonly #sources: DashboardSources;
  readonly #log: Logger;

  constructor(sources: DashboardSources, log: Logger) {
    this.#sources = sources;
    this.#log = log;
  }

  /** Runs a dead, cancelled or failed job again now with a fresh attempt budget. */
  async retryJob(id: string, actor: Actor): Promise<void> {
    const job = await this.#sources.store.getJob({ id });
    if (job === undefined) throw noSuchJob(id);
    if (!["dead", "cancelled", "failed"].includes(job.state) || !(await this.#sources.store.retryJob({ id }))) {
      throw new RequestRefused(DashboardErrorCode.Conflict, `Job ${id} is ${job.state}: only dead, cancelled or failed jobs can be retried.`);
    }
    this.#done("retry-job", `retried job ${id} (${job.queue})`, actor, { jobId: id, queue: job.queue });
  }

  /** Cancels a job that has not finished. */
  async cancelJob(id: string, actor: Actor): Promise<void> {
    const job = await this.#sources.store.getJob({ id });
    if (job === undefined) throw noSuchJob(id);
    if (!(await this.#sources.store.cancelJob({ id }))) {
      throw new RequestRefused(DashboardErrorCode.Conflict, `Job ${id} is ${job.state}: only blocked, queued, failed or running jobs can be cancelled.`);
    }
    this.#done("cancel-job", `cancelled job ${id} (${job.queue})`, actor, { jobId: id, queue: job.queue });
  }

  /**
   * Cancels a running workflow: every step of it that has not finished
   * (running ones as `cancelJob` cancels them). Returns how many steps it
   * cancelled; a 409 for a workflow that has finished (it is left as it
   * ended), a 404 for an unknown one.
   */
  async cancelWorkflow(id: string, actor: Actor): Promise<number> {
    const workflow = await readWorkflow(this.#sources, id);
    if (workflow.state !== "running") {
      throw new RequestRefused(DashboardErrorCode.Conflict, `Workflow ${id} has already finished (${workflow.state}): nothing to cancel.`);
    }
    const cancelled = (await this.#sources.store.cancelWorkflow({ id })) ?? 0;
    this.#done("cancel-workflow", `cancelled workflow ${id} (${workflow.name}), ${cancelled} steps`, actor, { workflowId: id, steps: cancelled });
    return cancelled;
  }

  /** Runs a queued job scheduled for later (or a failed one waiting for its retry) now, keeping its attempts. */
  async runJobNow(id: string, actor: Actor): Promise<void> {
    const job = await this.#sources.store.getJob({ id });
    if (job === undefined) throw noSuchJob(id);
    if (!(await this.#sources.store.runJobNow({ id }))) {
      throw new RequestRefused(DashboardErrorCode.Conflict, `Job ${id} is ${job.state}: only queued or failed jobs can be run now.`);
    }
    this.#done("run-job-now", `ran job ${id} (${job.queue}) now`, actor, { jobId: id, queue: job.queue });
  }

  /**
   * Retries the dead jobs of `queue`, at most `expected` of them (the count
   * the confirmation showed): jobs that die while this runs are not
   * retried twice. Returns how many were queued.
   */
  async retryDeadJobs(queue: string, expected: number, actor: Actor): Promise<number> {
    const name = await this.#existingQueue(queue);
    checkExpected(expected, "retry", MAX_RETRY_DEAD);
    let retried = 0;
    while (retried < expected) {
      const batch = Math.min(RETRY_DEAD_BATCH, expected - retried);
      const queued = await this.#sources.store.retryDeadJobs({ queue: name, limit: batch });
      retried += queued;
      if (queued < batch) break;
    }
    this.#done("retry-dead", `retried ${retried} dead jobs of ${name}`, actor, { queue: name, jobs: retried });
    return retried;
  }

  /**
   * Cancels the jobs of `queue` that wait in `states`, at most `expected`
   * of them (the count the confirmation showed): jobs enqueued while this
   * runs are not cancelled unasked. Returns how many were cancelled.
   */
  async cancelWaiting(queue: string, states: readonly WaitingJobState[], expected: number, actor: Actor): Promise<number> {
    const name = await this.#existingQueue(queue);
    checkExpected(expected, "cancel", MAX_CANCEL_WAITING);
    const { cancelled } = await this.#sources.admin.cancelWaiting(name, { states, max: expected });
    this.#done("cancel-waiting", `cancelled ${cancelled} ${states.join(" and ")} jobs of ${name}`, actor, { queue: name, states, jobs: cancelled });
    return cancelled;
  }

  /** Pauses or resumes `queue` for every worker. */
  async setPaused(queue: string, paused: boolean, actor: Actor): Promise<void> {
    const name = await this.#existingQueue(queue);
    try {
      await (paused ? this.#sources.admin.pause(name) : this.#sources.admin.resume(name));
    } catch (thrown) {
      // The store makes no controls row under a name that breaks the naming rule; it only changes one that exists.
      if (errorCodeOf(thrown) !== ErrorCode.InvalidName) throw thrown;
      throw new RequestRefused(
        DashboardErrorCode.Conflict,
        `Queue ${JSON.stringify(name)} breaks the naming rule and has no row in the queues table, so it cannot be ${paused ? "paused" : "resumed"} from here.`,
      );
    }
    this.#done(paused ? "pause" : "resume", `${paused ? "paused" : "resumed"} queue ${name}`, actor, { queue: name });
  }

  /** The queue a request names, checked, or a 404 when it has no jobs and no controls. */
  async #existingQueue(queue: string): Promise<string> {
    const name = checkedQueueName(queue);
    await assertQueueExists(this.#sources, name);
    return name;
  }

  #done(action: string, what: string, actor: Actor, fields: Record<string, unknown>): void {
    this.#log.info(`Dashboard: ${actor.who} ${what}`, { action, who: actor.who, remoteAddress: actor.remoteAddress, ...fields });
  }
}

/** The count a confirmation showed, sent back with the form: a 400 unless it is one. */
function checkExpected(expected: number, verb: string, max: number): void {
  if (!Number.isInteger(expected) || expected < 1 || expected > max) {
    throw badParameter("expected", `must be the number of jobs to ${verb}, from 1 to ${max}`);
  }
}
