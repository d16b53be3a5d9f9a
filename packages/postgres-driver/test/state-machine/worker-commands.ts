import { ErrorCode } from "@stint/core";
import { expect } from "chai";
import { applyClaim, claimable, fenceHolds, forget, jobOf, LEASE_MS, QUEUE, recordFinalize, WORKERS, type Belief, type Model, type Real } from "./model";
import { holdingWorker, LATER_MS, sortedIds, Step } from "./step";

/** `claimBatch` by one worker: exactly the jobs the model ranks first. */
export class Claim extends Step {
  constructor(
    readonly worker: number,
    readonly limit: number,
  ) {
    super();
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const workerId = WORKERS[this.worker]!;
    const expected = claimable(model, this.limit);
    const claimed = await real.store.claimBatch({ queue: QUEUE, workerId, limit: this.limit, leaseMs: LEASE_MS });
    expect(sortedIds(claimed.map((job) => job.id)), "claimed ids").to.deep.equal(sortedIds(expected.map((job) => job.id)));
    for (const job of expected) {
      const belief = applyClaim(model, workerId, job);
      const got = claimed.find((candidate) => candidate.id === job.id)!;
      expect({ attempt: got.attempt, maxAttempts: got.maxAttempts }, `claim of job ${job.id}`).to.deep.equal({
        attempt: belief.attempt,
        maxAttempts: belief.maxAttempts,
      });
    }
  }

  toString(): string {
    return `claim(worker ${this.worker}, limit ${this.limit})`;
  }
}

/** The three workers claim at the same moment: disjoint batches, none over its limit, nothing due left behind. */
export class ConcurrentClaims extends Step {
  constructor(readonly limits: readonly number[]) {
    super();
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const candidates = new Set(claimable(model, Number.MAX_SAFE_INTEGER).map((job) => job.id));
    const batches = await Promise.all(
      WORKERS.map((workerId, index) => real.store.claimBatch({ queue: QUEUE, workerId, limit: this.limits[index]!, leaseMs: LEASE_MS })),
    );
    const seen = new Set<string>();
    batches.forEach((batch, index) => {
      expect(batch.length, `worker ${index} over its limit`).to.be.at.most(this.limits[index]!);
      for (const job of batch) {
        expect(seen.has(job.id), `job ${job.id} claimed twice at once`).to.equal(false);
        expect(candidates.has(job.id), `job ${job.id} was not claimable`).to.equal(true);
        seen.add(job.id);
        const belief = applyClaim(model, WORKERS[index]!, jobOf(model, job.id));
        expect(job.attempt, `claim of job ${job.id}`).to.equal(belief.attempt);
      }
    });
    const total = this.limits.reduce((sum, limit) => sum + limit, 0);
    expect(seen.size, "claimable jobs left unclaimed").to.equal(Math.min(total, candidates.size));
  }

  toString(): string {
    return `concurrentClaims(limits ${this.limits.join("/")})`;
  }
}

/** `extendLeases` with everything the worker believes it holds, stale attempts included. */
export class Heartbeat extends Step {
  constructor(readonly worker: number) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return holdingWorker(model, this.worker) !== undefined;
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const workerId = holdingWorker(model, this.worker)!;
    const beliefs = model.beliefs.get(workerId)!;
    const expected = beliefs.filter((belief) => fenceHolds(model, workerId, belief));
    // An operator cancelled the attempt the worker believes it holds, while the worker owned it.
    const cancelled = beliefs.filter((belief) => {
      const job = jobOf(model, belief.id);
      return job.state === "cancelled" && job.owner === workerId && job.attempts === belief.attempt;
    });
    const renewal = await real.store.extendLeases({ workerId, leaseMs: LEASE_MS, jobs: beliefs.map(({ id, attempt }) => ({ id, attempt })) });
    expect(sortedIds(renewal.extended), "extended leases").to.deep.equal(sortedIds(expected.map((belief) => belief.id)));
    expect(sortedIds(renewal.cancelled), "leases cancelled under the worker").to.deep.equal(sortedIds(cancelled.map((belief) => belief.id)));
    for (const belief of expected) jobOf(model, belief.id).leaseExpired = false;
  }

  toString(): string {
    return `heartbeat(holding worker #${this.worker})`;
  }
}

/** How a worker ends one attempt. */
export type Ending = "complete" | "retry" | "retry-later" | "snooze" | "dead";

/**
 * A worker finalizes one attempt it believes it holds, fenced on owner and
 * attempt; it applies only if the worker still owns that attempt. A retry
 * on the last attempt goes to dead, as the worker's default policy does.
 */
export class Finalize extends Step {
  constructor(
    readonly worker: number,
    readonly which: number,
    readonly ending: Ending,
  ) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return holdingWorker(model, this.worker) !== undefined;
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const workerId = holdingWorker(model, this.worker)!;
    const beliefs = model.beliefs.get(workerId)!;
    const belief = beliefs[this.which % beliefs.length]!;
    const job = jobOf(model, belief.id);
    const holds = fenceHolds(model, workerId, belief);
    const attempt = { id: belief.id, attempt: belief.attempt };
    const failure = { message: `attempt ${belief.attempt} failed`, code: ErrorCode.Unknown };
    const ending = (this.ending === "retry" || this.ending === "retry-later") && belief.attempt >= belief.maxAttempts ? "dead" : this.ending;
    let applied: boolean;
    switch (ending) {
      case "complete": {
        const done = await real.store.completeJobs({ workerId, jobs: [{ ...attempt, resultJson: '{"ok":true}', durationMs: 1 }] });
        applied = done.includes(belief.id);
        if (holds) job.state = "succeeded";
        break;
      }
      case "retry":
      case "retry-later": {
        const later = ending === "retry-later";
        applied = (await real.store.scheduleRetries({ workerId, jobs: [{ ...attempt, delayMs: later ? LATER_MS : 0, failure, spendAttempt: true }] })).includes(
          belief.id,
        );
        if (holds) Object.assign(job, { state: "failed", due: !later, runAt: model.clock });
        break;
      }
      case "snooze": {
        applied = (await real.store.scheduleRetries({ workerId, jobs: [{ ...attempt, delayMs: 0, failure: null, spendAttempt: false }] })).includes(belief.id);
        if (holds) Object.assign(job, { state: "queued", due: true, runAt: model.clock, maxAttempts: job.maxAttempts + 1 });
        break;
      }
      case "dead": {
        applied = (await real.store.markJobsDead({ workerId, jobs: [{ ...attempt, failure }] })).includes(belief.id);
        if (holds) job.state = "dead";
        break;
      }
    }
    expect(
      applied,
      `${ending} of job ${belief.id} attempt ${belief.attempt} by ${workerId} (owner ${job.owner}, attempts ${job.attempts}, ${job.state})`,
    ).to.equal(holds);
    if (holds) {
      job.leaseExpired = false;
      recordFinalize(job, belief.attempt);
    }
    forget(model, workerId, belief);
  }

  toString(): string {
    return `finalize(holding worker #${this.worker}, attempt #${this.which}, ${this.ending})`;
  }
}

/** `completeJobs` for everything the worker believes it holds, in one statement. */
export class CompleteAll extends Step {
  constructor(readonly worker: number) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return holdingWorker(model, this.worker) !== undefined;
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const workerId = holdingWorker(model, this.worker)!;
    const beliefs: Belief[] = [...model.beliefs.get(workerId)!];
    const holding = beliefs.filter((belief) => fenceHolds(model, workerId, belief));
    const done = await real.store.completeJobs({
      workerId,
      jobs: beliefs.map(({ id, attempt }) => ({ id, attempt, resultJson: null, durationMs: 1 })),
    });
    expect(sortedIds(done), "completed").to.deep.equal(sortedIds(holding.map((belief) => belief.id)));
    for (const belief of holding) {
      const job = jobOf(model, belief.id);
      job.state = "succeeded";
      job.leaseExpired = false;
      recordFinalize(job, belief.attempt);
    }
    for (const belief of beliefs) forget(model, workerId, belief);
  }

  toString(): string {
    return `completeAll(holding worker #${this.worker})`;
  }
}
