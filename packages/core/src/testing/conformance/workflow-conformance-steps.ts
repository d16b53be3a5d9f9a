import assert from "node:assert/strict";
import type { ClaimedJob } from "../../job/job-record";
import type { JobState } from "../../job/job-state";
import type { NewJob } from "../../store/job-store";
import type { NewWorkflowStep } from "../../store/workflow-store";
import { newJob, type ConformanceContext } from "./conformance-harness";

/** The calls the workflow tests make on the store under test, each on one queue. */
export interface WorkflowSteps {
  /** A step of `queue` named `step`, waiting for the steps at `after`; its payload names it. */
  readonly step: (queue: string, step: string, after?: readonly number[], extra?: { ignoreFailed?: boolean; job?: Partial<NewJob> }) => NewWorkflowStep;
  /** Claims every due job of `queue` (up to 2,000) as `workerId`. */
  readonly claimAll: (queue: string, workerId?: string) => Promise<readonly ClaimedJob[]>;
  /** Completes `jobs` with the result `{ done: <the payload's step> }`. */
  readonly succeed: (jobs: readonly ClaimedJob[], workerId?: string) => Promise<readonly string[]>;
  /** Gives up on `job`: `dead`. */
  readonly kill: (job: ClaimedJob, workerId?: string) => Promise<void>;
  /** The state of each job, by id. */
  readonly statesOf: (ids: readonly string[]) => Promise<JobState[]>;
  /** Claims due jobs of `queue` and completes them, until nothing is due; returns the ids in the order they ran. */
  readonly drain: (queue: string) => Promise<string[]>;
}

/** The helpers of the workflow suites over `ctx`'s store. */
export function workflowSteps<Tx>(ctx: ConformanceContext<Tx>): WorkflowSteps {
  const steps: WorkflowSteps = {
    step: (queue, step, after = [], extra = {}) => ({
      step,
      job: newJob(queue, { step }, extra.job),
      after,
      ignoreFailedDependencies: extra.ignoreFailed === true,
    }),
    claimAll: (queue, workerId = "w1") => ctx.store().claimBatch({ queue, workerId, limit: 2_000, leaseMs: 60_000 }),
    succeed: (jobs, workerId = "w1") =>
      ctx.store().completeJobs({
        workerId,
        jobs: jobs.map((job) => ({
          id: job.id,
          attempt: job.attempt,
          resultJson: JSON.stringify({ done: (job.payload as { step: string }).step }),
          durationMs: 1,
        })),
      }),
    kill: async (job, workerId = "w1") => {
      const dead = await ctx
        .store()
        .markJobsDead({ workerId, jobs: [{ id: job.id, attempt: job.attempt, failure: { message: "Error: broken", code: "E_BROKEN" } }] });
      assert.deepStrictEqual(dead, [job.id]);
    },
    statesOf: async (ids) => Promise.all(ids.map(async (id) => (await ctx.store().getJob({ id }))?.state ?? ("missing" as JobState))),
    drain: async (queue) => {
      const ran: string[] = [];
      for (let jobs = await steps.claimAll(queue); jobs.length > 0; jobs = await steps.claimAll(queue)) {
        ran.push(...jobs.map((job) => job.id));
        await steps.succeed(jobs);
      }
      return ran;
    },
  };
  return steps;
}

/** The payload's step name of each claimed job, sorted. */
export function stepNames(jobs: readonly ClaimedJob[]): string[] {
  return jobs.map((job) => (job.payload as { step: string }).step).sort();
}
