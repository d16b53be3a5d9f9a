import type { JobState } from "@stint/core";
import { expect } from "chai";
import type { Kysely } from "kysely";
import type { PostgresJobStore } from "../../src";

/** The one queue the state machine runs on. */
export const QUEUE = "state-machine";
/** The workers' identities: three processes sharing the queue. */
export const WORKERS = ["sm-worker-0", "sm-worker-1", "sm-worker-2"] as const;
/** Leases never run out on their own during a run; `ExpireLease` ends them. */
export const LEASE_MS = 600_000;

const ACTIVE: readonly JobState[] = ["queued", "running", "failed"];
const TERMINAL: readonly JobState[] = ["succeeded", "dead", "cancelled"];

/** What the model knows about one job. */
export interface ModelJob {
  readonly id: string;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  readonly priority: number;
  readonly dedupeKey: string | null;
  /** `locked_by` of a running job. */
  owner: string | null;
  /** The running job's lease has expired (`locked_until < now()`). */
  leaseExpired: boolean;
  /** Logical time of the last `locked_until < now()` (orders expired leases, like `ORDER BY locked_until`). */
  expiredAt: number;
  /** `run_at <= now()`: false only for jobs delayed into the far future. */
  due: boolean;
  /** Logical time `run_at` was set (orders due jobs, like `ORDER BY run_at`). */
  runAt: number;
  /** Fenced finalizes that applied, per attempt: the invariant is at most one. */
  readonly finalized: Map<number, number>;
}

/** An attempt a worker believes it holds; it may have lost it without noticing (a stale owner). */
export interface Belief {
  readonly id: string;
  readonly attempt: number;
  readonly maxAttempts: number;
}

/** The model: the jobs, and what each worker believes it holds. */
export interface Model {
  readonly jobs: ModelJob[];
  readonly beliefs: Map<string, Belief[]>;
  /** Logical clock: one tick per command. */
  clock: number;
  /** `attempts` of each job at the last check, to see that it never decreases. */
  readonly lastAttempts: Map<string, number>;
}

/** The real system: a store over a schema of its own, and its pool for the checks. */
export interface Real {
  readonly store: PostgresJobStore;
  readonly db: Kysely<any>;
  readonly schema: string;
}

export function emptyModel(): Model {
  return { jobs: [], beliefs: new Map(WORKERS.map((worker) => [worker, []])), clock: 0, lastAttempts: new Map() };
}

export function jobOf(model: Model, id: string): ModelJob {
  const job = model.jobs.find((candidate) => candidate.id === id);
  if (job === undefined) throw new Error(`the model has no job ${id}`);
  return job;
}

export function isActive(job: ModelJob): boolean {
  return ACTIVE.includes(job.state);
}

export function isTerminal(state: JobState): boolean {
  return TERMINAL.includes(state);
}

/** The active job holding a dedupe key, if any (at most one: the unique index). */
export function holderOf(model: Model, key: string | null, except?: string): ModelJob | undefined {
  if (key === null) return undefined;
  return model.jobs.find((job) => job.dedupeKey === key && isActive(job) && job.id !== except);
}

/** Whether a fenced write by `worker` for `belief` matches the row: running, owned by it, at that attempt. */
export function fenceHolds(model: Model, worker: string, belief: Belief): boolean {
  const job = jobOf(model, belief.id);
  return job.state === "running" && job.owner === worker && job.attempts === belief.attempt;
}

/** Records an applied finalize of one attempt; a second one for the same attempt breaks the invariant. */
export function recordFinalize(job: ModelJob, attempt: number): void {
  const count = (job.finalized.get(attempt) ?? 0) + 1;
  job.finalized.set(attempt, count);
  expect(count, `job ${job.id} attempt ${attempt} finalized ${count} times`).to.equal(1);
}

/** Removes one belief of a worker (it finalized, or gave up on, the attempt). */
export function forget(model: Model, worker: string, belief: Belief): void {
  const beliefs = model.beliefs.get(worker) ?? [];
  model.beliefs.set(
    worker,
    beliefs.filter((held) => held !== belief),
  );
}

function byId(a: ModelJob, b: ModelJob): number {
  return Number(BigInt(a.id) - BigInt(b.id));
}

/**
 * The jobs a claim of `limit` takes, in the store's order: due `queued`
 * and `failed` jobs by priority (high first), `run_at`, id; then running
 * jobs whose lease expired and that have attempts left, oldest lease first.
 */
export function claimable(model: Model, limit: number): ModelJob[] {
  const due = model.jobs
    .filter((job) => (job.state === "queued" || job.state === "failed") && job.due)
    .sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || byId(a, b))
    .slice(0, limit);
  const expired = model.jobs
    .filter((job) => job.state === "running" && job.leaseExpired && job.attempts < job.maxAttempts)
    .sort((a, b) => a.expiredAt - b.expiredAt || byId(a, b))
    .slice(0, Math.max(0, limit - due.length));
  return [...due, ...expired];
}

/** Running jobs with an expired lease, oldest lease first: what a rescue of `limit` handles. */
export function rescuable(model: Model, limit: number): ModelJob[] {
  return model.jobs
    .filter((job) => job.state === "running" && job.leaseExpired)
    .sort((a, b) => a.expiredAt - b.expiredAt || byId(a, b))
    .slice(0, limit);
}

/** The model side of a claim: the job is running, owned by `worker`, one more attempt spent. */
export function applyClaim(model: Model, worker: string, job: ModelJob): Belief {
  job.state = "running";
  job.owner = worker;
  job.attempts += 1;
  job.leaseExpired = false;
  const belief = { id: job.id, attempt: job.attempts, maxAttempts: job.maxAttempts };
  model.beliefs.get(worker)?.push(belief);
  return belief;
}
