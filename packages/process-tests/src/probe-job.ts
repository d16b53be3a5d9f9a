import { defineJob } from "@stint/core";

/** A job that carries only its sequence number: the unit of work of the benchmarks and the multi-process tests. */
export interface Probe {
  readonly seq: number;
}

/** The probe job kind. */
export const ProbeJob = defineJob<Probe>("probe", { maxAttempts: 5 });

/** Reads a probe payload; the field name is in the error. */
export function parseProbe(payload: unknown): Probe {
  const seq = (payload as { seq?: unknown } | null)?.seq;
  if (typeof seq !== "number" || !Number.isInteger(seq)) throw new Error(`seq must be an integer, got ${JSON.stringify(seq)}`);
  return { seq };
}
