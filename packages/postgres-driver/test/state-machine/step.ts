import type fc from "fast-check";
import { checkInvariants } from "./invariants";
import { WORKERS, type Model, type Real } from "./model";

/** How far "later" is: a job delayed or retried later than any run lasts. */
export const LATER_MS = 3_600_000;

/** Ids in numeric order, for comparing sets of jobs. */
export const sortedIds = (ids: Iterable<string>): string[] => [...ids].sort((a, b) => Number(BigInt(a) - BigInt(b)));

/** The `choice`-th (modulo) of the workers that believe they hold something: a step about held jobs always has a worker. */
export function holdingWorker(model: Readonly<Model>, choice: number): string | undefined {
  const holding = WORKERS.filter((worker) => (model.beliefs.get(worker)?.length ?? 0) > 0);
  return holding.length === 0 ? undefined : holding[choice % holding.length];
}

/**
 * One step of a sequence: it runs against the store, compares each result
 * with what the model predicts, updates the model, and checks the
 * invariants over every row.
 */
export abstract class Step implements fc.AsyncCommand<Model, Real> {
  check(_model: Readonly<Model>): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    model.clock += 1;
    await this.apply(model, real);
    await checkInvariants(model, real, this.toString());
  }

  protected abstract apply(model: Model, real: Real): Promise<void>;
  abstract toString(): string;
}
