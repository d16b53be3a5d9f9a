import { ErrorCode, errorCodeOf } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { holderOf, isActive, rescuable, QUEUE, type Model, type Real } from "./model";
import { Step } from "./step";

/** `rescueExpiredLeases`: expired running jobs go back to failed (attempts left) or to dead. */
export class Rescue extends Step {
  constructor(
    readonly limit: number,
    readonly scoped: boolean,
  ) {
    super();
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const expected = rescuable(model, this.limit);
    const result = await real.store.rescueExpiredLeases({ limit: this.limit, ...(this.scoped ? { queues: [QUEUE] } : {}) });
    const retried = expected.filter((job) => job.attempts < job.maxAttempts);
    expect(result).to.deep.equal({ retried: retried.length, dead: expected.length - retried.length });
    for (const job of expected) {
      const retry = job.attempts < job.maxAttempts;
      Object.assign(job, { state: retry ? "failed" : "dead", leaseExpired: false, ...(retry ? { due: true, runAt: model.clock } : {}) });
    }
  }

  toString(): string {
    return `rescue(limit ${this.limit}${this.scoped ? ", this queue" : ""})`;
  }
}

/** `cancelJob` by an operator: only a job that has not finished. */
export class Cancel extends Step {
  constructor(readonly which: number) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return model.jobs.length > 0;
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const job = model.jobs[this.which % model.jobs.length]!;
    const expected = isActive(job);
    expect(await real.store.cancelJob({ id: job.id }), `cancel of ${job.state} job ${job.id}`).to.equal(expected);
    if (expected) Object.assign(job, { state: "cancelled", leaseExpired: false });
  }

  toString(): string {
    return `cancel(#${this.which})`;
  }
}

/** `retryJob` by an operator: a dead, cancelled or failed job runs again with a fresh budget. */
export class OperatorRetry extends Step {
  constructor(readonly which: number) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return model.jobs.length > 0;
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const job = model.jobs[this.which % model.jobs.length]!;
    const retryable = job.state === "dead" || job.state === "cancelled" || job.state === "failed";
    const holder = retryable ? holderOf(model, job.dedupeKey, job.id) : undefined;
    let outcome: boolean | string;
    try {
      outcome = await real.store.retryJob({ id: job.id });
    } catch (thrown) {
      outcome = errorCodeOf(thrown) ?? String(thrown);
    }
    if (holder !== undefined) {
      expect(outcome, `retry of job ${job.id} whose key job ${holder.id} holds`).to.equal(ErrorCode.Database);
      return;
    }
    expect(outcome, `retry of ${job.state} job ${job.id}`).to.equal(retryable);
    if (retryable) {
      Object.assign(job, { state: "queued", maxAttempts: job.attempts + job.maxAttempts, due: true, runAt: model.clock, owner: null, leaseExpired: false });
    }
  }

  toString(): string {
    return `operatorRetry(#${this.which})`;
  }
}

/** Time passes for one running job: its lease runs out (`locked_until` moved into the past, no sleeping). */
export class ExpireLease extends Step {
  constructor(readonly which: number) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return model.jobs.some((job) => job.state === "running");
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const running = model.jobs.filter((job) => job.state === "running");
    const job = running[this.which % running.length]!;
    await sql`UPDATE ${sql.id(real.schema, "jobs")} SET locked_until = now() - interval '1 hour'
      WHERE id = ${job.id}::bigint AND state = 'running'`.execute(real.db);
    job.leaseExpired = true;
    job.expiredAt = model.clock;
  }

  toString(): string {
    return `expireLease(#${this.which})`;
  }
}

/** Time passes for one delayed job: its `run_at` arrives. */
export class MakeDue extends Step {
  constructor(readonly which: number) {
    super();
  }

  override check(model: Readonly<Model>): boolean {
    return model.jobs.some((job) => (job.state === "queued" || job.state === "failed") && !job.due);
  }

  protected async apply(model: Model, real: Real): Promise<void> {
    const waiting = model.jobs.filter((job) => (job.state === "queued" || job.state === "failed") && !job.due);
    const job = waiting[this.which % waiting.length]!;
    await sql`UPDATE ${sql.id(real.schema, "jobs")} SET run_at = now() WHERE id = ${job.id}::bigint`.execute(real.db);
    Object.assign(job, { due: true, runAt: model.clock });
  }

  toString(): string {
    return `makeDue(#${this.which})`;
  }
}
