import { defineJob } from "@stint/core";

/** A job that carries only its sequence number: the unit of work of the benchmarks and the multi-process tests. */
export interface Probe {
  readonly seq: number;
  /** Fail on the first attempt (`retry-once`) or for good (`permanent`). */
  readonly fail?: "retry-once" | "permanent";
  /** Batch mode only: the job waits `PROBE_SLEEP_MS` with the batch; the others settle at once. */
  readonly slow?: boolean;
}

/** The probe job kind. */
export const ProbeJob = defineJob<Probe>("probe", { maxAttempts: 5 });

/** Reads a probe payload; the field name is in the error. */
export function parseProbe(payload: unknown): Probe {
  const seq = (payload as { seq?: unknown } | null)?.seq;
  if (typeof seq !== "number" || !Number.isInteger(seq)) throw new Error(`seq must be an integer, got ${JSON.stringify(seq)}`);
  const { fail, slow } = payload as { fail?: unknown; slow?: unknown };
  if (fail !== undefined && fail !== "retry-once" && fail !== "permanent")
    throw new Error(`fail must be "retry-once" or "permanent", got ${JSON.stringify(fail)}`);
  return { seq, ...(fail === undefined ? {} : { fail }), ...(slow === true ? { slow } : {}) };
}
