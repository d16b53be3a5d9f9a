import { expect } from "chai";
import fc from "fast-check";
import { ErrorCode } from "../../src/errors/error-codes";
import type { ClaimedJob } from "../../src/job/job-record";
import { JOB_STATES } from "../../src/job/job-state";
import type { NewWorkflowStep } from "../../src/store/workflow-store";
import { newJob } from "../../src/testing/conformance/conformance-harness";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

type Outcome = "succeed" | "die" | "cancel";

/** One step of a generated workflow, in a topological order: it waits only for steps before it. */
interface PlannedStep {
  readonly after: readonly number[];
  readonly ignoreFailed: boolean;
  readonly outcome: Outcome;
}

const QUEUE = "dag";

/** Up to 30 steps, each waiting for a random set of the steps before it, with a random outcome. */
const plans = fc.integer({ min: 1, max: 30 }).chain((size) =>
  fc.tuple(
    fc.tuple(
      ...Array.from({ length: size }, (_, index) =>
        fc.record({
          after: index === 0 ? fc.constant<number[]>([]) : fc.uniqueArray(fc.integer({ min: 0, max: index - 1 }), { maxLength: Math.min(index, 5) }),
          ignoreFailed: fc.boolean(),
          outcome: fc.constantFrom<Outcome>("succeed", "succeed", "succeed", "die", "cancel"),
        }),
      ),
    ),
    // Where each step stands in the list given to the store: `after` names positions before and after it.
    fc.shuffledSubarray(
      Array.from({ length: size }, (_, n) => n),
      { minLength: size, maxLength: size },
    ),
    // The choices of which running step finishes next.
    fc.array(fc.nat(), { minLength: 1, maxLength: 64 }),
  ),
);

/** Whether each step runs, in the model: a step ignoring failures always does; another when every step it waits for ran and succeeded. */
function expectedRuns(steps: readonly PlannedStep[]): boolean[] {
  const runs: boolean[] = [];
  steps.forEach((entry, index) => {
    runs[index] = entry.ignoreFailed || entry.after.every((other) => runs[other] === true && steps[other]!.outcome === "succeed");
  });
  return runs;
}

/**
 * Claims due steps and finishes one running step at a time, picked by
 * `choices`, with `outcomeOf` its index, until nothing runs or is due;
 * checks that each step starts once (noted in `started`) and only once the
 * steps it waits for succeeded (or finished, for one ignoring failures;
 * once steps were `retried`, one ignoring failures may start beside a
 * retried dependency: the failure it was waiting for was counted for it).
 */
async function runUntilIdle(
  store: InMemoryJobStore,
  steps: readonly PlannedStep[],
  jobOf: (index: number) => string,
  started: Set<number>,
  choices: readonly number[],
  outcomeOf: (index: number) => Outcome,
  retried: boolean,
): Promise<void> {
  const running: ClaimedJob[] = [];
  for (let choice = 0; ; choice += 1) {
    for (const job of await store.claimBatch({ queue: QUEUE, workerId: "w", limit: 100, leaseMs: 60_000 })) {
      const index = (job.payload as { index: number }).index;
      expect(started.has(index), `step ${index} ran twice`).to.equal(false);
      started.add(index);
      const states = await Promise.all(steps[index]!.after.map(async (other) => (await store.getJob({ id: jobOf(other) }))?.state));
      const allowed = !steps[index]!.ignoreFailed ? ["succeeded"] : retried ? JOB_STATES : ["succeeded", "dead", "cancelled"];
      expect(
        states.every((state) => allowed.includes(state!)),
        `step ${index} started with its dependencies ${String(states)}`,
      ).to.equal(true);
      running.push(job);
    }
    if (running.length === 0) return;
    const [job] = running.splice(choices[choice % choices.length]! % running.length, 1);
    const attempt = { id: job!.id, attempt: job!.attempt };
    const outcome = outcomeOf((job!.payload as { index: number }).index);
    if (outcome === "succeed") await store.completeJobs({ workerId: "w", jobs: [{ ...attempt, resultJson: "1", durationMs: 1 }] });
    else if (outcome === "die") await store.markJobsDead({ workerId: "w", jobs: [{ ...attempt, failure: { message: "Error: no", code: null } }] });
    else await store.cancelJob({ id: job!.id });
  }
}

describe("workflows in the in-memory store, for random DAGs and finish orders", () => {
  it("runs every step at most once, never before its dependencies succeeded (or finished, ignoring failures), leaves nothing blocked, and resumes on retries", async () => {
    await fc.assert(
      fc.asyncProperty(plans, async ([steps, order, choices]) => {
        const store = new InMemoryJobStore({ clock: new ManualClock() });
        // Step i of the plan stands at position order[i] of the list.
        const listed = new Array<NewWorkflowStep>(steps.length);
        steps.forEach((entry, index) => {
          listed[order[index]!] = {
            step: `s${index}`,
            job: newJob(QUEUE, { index }, { maxAttempts: 1 }),
            after: entry.after.map((other) => order[other]!),
            ignoreFailedDependencies: entry.ignoreFailed,
          };
        });
        const { id, jobIds } = await store.enqueueWorkflow({ name: "random", steps: listed });
        const jobOf = (index: number) => jobIds[order[index]!]!;
        const started = new Set<number>();
        const run = (outcomeOf: (index: number) => Outcome, retried: boolean) => runUntilIdle(store, steps, jobOf, started, choices, outcomeOf, retried);
        await run((index) => steps[index]!.outcome, false);

        const runs = expectedRuns(steps);
        const workflow = (await store.getWorkflow({ id }))!;
        expect(workflow.counts.blocked ?? 0, "nothing is left blocked").to.equal(0);
        for (const [index, entry] of steps.entries()) {
          const job = await store.getJob({ id: jobOf(index) });
          expect(started.has(index), `whether step ${index} ran`).to.equal(runs[index]);
          if (runs[index]) expect(job?.state).to.equal({ succeed: "succeeded", die: "dead", cancel: "cancelled" }[entry.outcome]);
          else {
            expect(job).to.include({ state: "cancelled", errorCode: ErrorCode.DependencyFailed });
            // The reason names the step whose failure it was: one that ran and ended dead or cancelled.
            const [, root] = /^cancelled: step "s(\d+)" \(job \d+\) that it waits for is (?:dead|cancelled)$/.exec(job!.lastError ?? "") ?? [];
            expect(root, job!.lastError ?? "").to.be.a("string");
            expect(started.has(Number(root)) && steps[Number(root)]!.outcome !== "succeed", `step ${root} failed`).to.equal(true);
          }
        }
        const allSucceeded = steps.every((entry, index) => runs[index] && entry.outcome === "succeed");
        expect(workflow.state).to.equal(allSucceeded ? "succeeded" : "failed");

        // Retrying each step that failed of itself resumes the workflow: the steps its failure cancelled run once it succeeds.
        const roots = steps.flatMap((entry, index) => (runs[index] && entry.outcome !== "succeed" ? [index] : []));
        for (const index of roots) expect(await store.retryJob({ id: jobOf(index) })).to.equal(true);
        started.clear();
        await run(() => "succeed", true);
        const resumed = (await store.getWorkflow({ id }))!;
        expect(resumed).to.include({ state: "succeeded", stepCount: steps.length });
        expect(
          [...started].sort((a, b) => a - b),
          "the second round runs the retried steps and the ones they had cancelled",
        ).to.deep.equal(steps.flatMap((_, index) => (runs[index] && !roots.includes(index) ? [] : [index])));
      }),
      { numRuns: 100 },
    );
  });
});
