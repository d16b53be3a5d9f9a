import { defineJob } from "@stint/core";

/**
 * A workflow step of the multi-process tests: its sequence number, and what
 * its handler does besides recording its run.
 */
export interface StepProbe {
  readonly seq: number;
  /** Finish at this instant (ms since the epoch), or when the signal aborts: steps in two processes finish together. */
  readonly holdUntil?: number;
  /** Read `ctx.dependencies()` once and record the `seq` of every result it returned. */
  readonly readDependencies?: boolean;
  /** Add this many steps `added` (seqs `seq + 1` to `seq + addSteps`) through `ctx.addSteps`. */
  readonly addSteps?: number;
}

/** What a step probe returns: its own `seq`, for the steps after it to read. */
export interface StepProbeResult {
  readonly seq: number;
}

/** The step probe job kind. */
export const StepProbeJob = defineJob<StepProbe, StepProbeResult>("probe-step", { maxAttempts: 5 });

/** Reads a step probe payload; the field name is in the error. */
export function parseStepProbe(payload: unknown): StepProbe {
  const { seq, holdUntil, readDependencies, addSteps } = (payload ?? {}) as Record<string, unknown>;
  if (typeof seq !== "number" || !Number.isInteger(seq)) throw new Error(`seq must be an integer, got ${JSON.stringify(seq)}`);
  if (holdUntil !== undefined && typeof holdUntil !== "number") throw new Error(`holdUntil must be a number, got ${JSON.stringify(holdUntil)}`);
  if (readDependencies !== undefined && typeof readDependencies !== "boolean") {
    throw new Error(`readDependencies must be true or false, got ${JSON.stringify(readDependencies)}`);
  }
  if (addSteps !== undefined && (typeof addSteps !== "number" || !Number.isInteger(addSteps) || addSteps < 0)) {
    throw new Error(`addSteps must be a count, got ${JSON.stringify(addSteps)}`);
  }
  return {
    seq,
    ...(holdUntil === undefined ? {} : { holdUntil }),
    ...(readDependencies === true ? { readDependencies } : {}),
    ...(addSteps === undefined ? {} : { addSteps }),
  };
}
