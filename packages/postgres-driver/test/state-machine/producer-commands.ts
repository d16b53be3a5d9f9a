import type { NewJob } from "@stint/core/driver";
import { expect } from "chai";
import { holderOf, QUEUE, type Model, type ModelJob, type Real } from "./model";
import { LATER_MS, Step } from "./step";

/** A job to enqueue, as the commands generate it. */
export interface JobSpec {
  readonly priority: number;
  readonly maxAttempts: number;
  /** Run an hour from now instead of now. */
  readonly delayed: boolean;
  readonly dedupeKey: string | null;
}

function newJob(spec: JobSpec): NewJob {
  return {
    queue: QUEUE,
    payloadJson: "{}",
    priority: spec.priority,
    maxAttempts: spec.maxAttempts,
    timeoutMs: null,
    runAt: null,
    delayMs: spec.delayed ? LATER_MS : 0,
    dedupeKey: spec.dedupeKey,
  };
}

function modelJob(id: string, spec: JobSpec, clock: number): ModelJob {
  return {
    id,
    state: "queued",
    attempts: 0,
    maxAttempts: spec.maxAttempts,
    priority: spec.priority,
    dedupeKey: spec.dedupeKey,
    owner: null,
    leaseExpired: false,
    expiredAt: 0,
    due: !spec.delayed,
    runAt: clock,
    finalized: new Map(),
  };
}

/** `enqueue`: a new job, or the active job holding its dedupe key. */
export class Enqueue extends Step {
  constructor(readonly spec: JobSpec) {
    super();
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const result = await real.store.enqueue(newJob(this.spec));
    const holder = holderOf(model, this.spec.dedupeKey);
    if (holder !== undefined) {
      expect(result, "a duplicate of the active holder").to.deep.equal({ id: holder.id, duplicate: true });
      return;
    }
    expect(result.duplicate).to.equal(false);
    model.jobs.push(modelJob(result.id, this.spec, model.clock));
  }

  toString(): string {
    return `enqueue(${JSON.stringify(this.spec)})`;
  }
}

/** `enqueueMany`: one statement; a later item with an earlier one's key is its duplicate. */
export class EnqueueMany extends Step {
  constructor(readonly specs: readonly JobSpec[]) {
    super();
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const results = await real.store.enqueueMany(this.specs.map(newJob));
    expect(results).to.have.length(this.specs.length);
    let lastNew = 0n;
    this.specs.forEach((spec, index) => {
      const result = results[index]!;
      const holder = holderOf(model, spec.dedupeKey);
      if (holder !== undefined) {
        expect(result, `item ${index}: a duplicate of the active holder`).to.deep.equal({ id: holder.id, duplicate: true });
        return;
      }
      expect(result.duplicate, `item ${index}`).to.equal(false);
      expect(BigInt(result.id) > lastNew, "ids are reserved in input order").to.equal(true);
      lastNew = BigInt(result.id);
      model.jobs.push(modelJob(result.id, spec, model.clock));
    });
  }

  toString(): string {
    return `enqueueMany(${JSON.stringify(this.specs)})`;
  }
}
