import type fc from "fast-check";
import { Claim, CompleteAll, ConcurrentClaims, Enqueue, ExpireLease, Finalize, Heartbeat, OperatorRetry, Rescue } from "./commands";
import type { Model, Real } from "./model";

/** A sequence kept as a regression case: replayed on every run, before the random ones. */
export interface RegressionCase {
  readonly name: string;
  readonly commands: () => fc.AsyncCommand<Model, Real>[];
}

const job = { priority: 0, maxAttempts: 2, delayed: false, dedupeKey: null };

/**
 * Sequences worth keeping. When the property finds a failing sequence, its
 * shrunk form (printed by fast-check as the commands' `toString`s) is added
 * here, so it is replayed on every run even after the random search moves on.
 * Replays of a fast-check run can also be kept in {@link REPLAYS}.
 */
export const REGRESSIONS: readonly RegressionCase[] = [
  {
    name: "a stale owner's heartbeat and completion after a reclaim apply to nothing",
    commands: () => [
      new Enqueue(job),
      new Claim(0, 1),
      new ExpireLease(0),
      new Claim(1, 1),
      new Heartbeat(0),
      new Finalize(0, 0, "complete"),
      new Finalize(1, 0, "complete"),
    ],
  },
  {
    name: "a stale owner's retry cannot resurrect a job the next owner completed",
    commands: () => [new Enqueue(job), new Claim(0, 1), new ExpireLease(0), new Claim(1, 1), new Finalize(1, 0, "complete"), new Finalize(0, 0, "retry")],
  },
  {
    name: "a worker that reclaims its own expired job holds only the new attempt",
    commands: () => [
      new Enqueue({ ...job, maxAttempts: 3 }),
      new Claim(0, 1),
      new ExpireLease(0),
      new Claim(0, 1),
      new Finalize(0, 0, "complete"),
      new Heartbeat(0),
      new CompleteAll(0),
    ],
  },
  {
    name: "rescue on the last attempt is dead; the late owner's dead write applies to nothing",
    commands: () => [new Enqueue({ ...job, maxAttempts: 1 }), new Claim(2, 1), new ExpireLease(0), new Rescue(3, true), new Finalize(2, 0, "dead")],
  },
  {
    name: "an operator retry of a dead job whose key another job now holds is refused",
    commands: () => [
      new Enqueue({ ...job, maxAttempts: 1, dedupeKey: "key-a" }),
      new Claim(0, 1),
      new Finalize(0, 0, "dead"),
      new Enqueue({ ...job, dedupeKey: "key-a" }),
      new OperatorRetry(0),
      new ConcurrentClaims([1, 1, 1]),
    ],
  },
];

/**
 * fast-check runs to replay exactly, as a failure reports them:
 * `{ seed, path }` for `fc.assert` and the `replayPath` of `fc.commands`.
 */
export const REPLAYS: readonly { readonly seed: number; readonly path: string; readonly replayPath?: string }[] = [];
