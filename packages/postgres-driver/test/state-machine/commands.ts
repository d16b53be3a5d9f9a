import fc from "fast-check";
import { WORKERS, type Model, type Real } from "./model";
import { Cancel, ExpireLease, MakeDue, OperatorRetry, Rescue } from "./operator-commands";
import { Enqueue, EnqueueMany, type JobSpec } from "./producer-commands";
import { Claim, CompleteAll, ConcurrentClaims, Finalize, Heartbeat, type Ending } from "./worker-commands";

export { Cancel, ExpireLease, MakeDue, OperatorRetry, Rescue } from "./operator-commands";
export { Enqueue, EnqueueMany, type JobSpec } from "./producer-commands";
export { Claim, CompleteAll, ConcurrentClaims, Finalize, Heartbeat, type Ending } from "./worker-commands";

const worker = fc.integer({ min: 0, max: WORKERS.length - 1 });
const which = fc.nat({ max: 60 });
const jobSpec: fc.Arbitrary<JobSpec> = fc.record({
  priority: fc.integer({ min: -1, max: 1 }),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  delayed: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  dedupeKey: fc.constantFrom(null, null, null, "key-a", "key-b"),
});

/** Every command, weighted by repetition: claims, lease expiries and finalizes come up most. */
export const COMMANDS: fc.Arbitrary<fc.AsyncCommand<Model, Real>>[] = [
  jobSpec.map((spec) => new Enqueue(spec)),
  jobSpec.map((spec) => new Enqueue(spec)),
  fc.array(jobSpec, { minLength: 2, maxLength: 4 }).map((specs) => new EnqueueMany(specs)),
  fc.tuple(worker, fc.integer({ min: 1, max: 3 })).map(([w, limit]) => new Claim(w, limit)),
  fc.tuple(worker, fc.integer({ min: 1, max: 3 })).map(([w, limit]) => new Claim(w, limit)),
  fc.array(fc.integer({ min: 1, max: 2 }), { minLength: WORKERS.length, maxLength: WORKERS.length }).map((limits) => new ConcurrentClaims(limits)),
  worker.map((w) => new Heartbeat(w)),
  fc.tuple(worker, which, fc.constantFrom<Ending>("complete", "retry", "retry-later", "snooze", "dead")).map(([w, n, ending]) => new Finalize(w, n, ending)),
  fc.tuple(worker, which, fc.constantFrom<Ending>("complete", "retry", "dead")).map(([w, n, ending]) => new Finalize(w, n, ending)),
  fc.tuple(worker, which, fc.constantFrom<Ending>("complete", "retry")).map(([w, n, ending]) => new Finalize(w, n, ending)),
  worker.map((w) => new Heartbeat(w)),
  worker.map((w) => new CompleteAll(w)),
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.boolean()).map(([limit, scoped]) => new Rescue(limit, scoped)),
  which.map((n) => new ExpireLease(n)),
  which.map((n) => new ExpireLease(n)),
  which.map((n) => new Cancel(n)),
  which.map((n) => new OperatorRetry(n)),
  which.map((n) => new MakeDue(n)),
];
