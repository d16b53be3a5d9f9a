import { defineJob, ParseError } from "@stint/core";
import { MAX_INT4 } from "@stint/core/driver";

/** What a chaos job's handler does; each scenario picks the ones it needs. */
export const CHAOS_ACTIONS = [
  /** Waits `ms`, honouring its abort signal. */
  "sleep",
  /** Like `sleep`, and records in the oracle when the wait ended: done, or the abort observed. */
  "sleep-timed",
  /** Blocks the event loop with a synchronous busy loop for `ms`. */
  "block",
  /** Waits `ms` on a timer that ignores its abort signal. */
  "ignore-signal",
  /** Sends SIGKILL to its own process. */
  "kill-self",
  /** Throws a retryable error, every attempt. */
  "fail",
  /** Waits, makes an effect through `ctx.once`, waits again. */
  "effect",
  /** Waits, then writes a ledger row and completes the job in one `ctx.transaction`. */
  "transaction",
] as const;

/** One of {@link CHAOS_ACTIONS}. */
export type ChaosAction = (typeof CHAOS_ACTIONS)[number];

/** The payload of a chaos job. */
export interface ChaosTask {
  /** The job's number within its scenario; effects and ledger rows are keyed by it. */
  readonly seq: number;
  readonly action: ChaosAction;
  /** How long the action waits or blocks, in ms. */
  readonly ms: number;
  /** On the first attempt only, this instead of `ms` (a long first attempt). */
  readonly firstMs?: number;
}

/** The chaos job kind: one queue, the handler's behaviour chosen by the payload. */
export const ChaosJob = defineJob<ChaosTask>("chaos", { maxAttempts: 10 });

const FIELDS = ["seq", "action", "ms", "firstMs"];
const MAX_MS = 600_000;

/**
 * Reads a chaos payload. An invalid one throws a `ParseError` whose message
 * starts with the field that failed, e.g. `seq must be an integer from 0 to
 * 2147483647, got "7"`.
 */
export function parseChaosTask(payload: unknown): ChaosTask {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw invalid("payload", "must be an object", payload);
  const record = payload as Record<string, unknown>;
  const unknownField = Object.keys(record).find((key) => !FIELDS.includes(key));
  if (unknownField !== undefined) throw invalid(unknownField, `is not a known field (known: ${FIELDS.join(", ")})`, record[unknownField]);
  const seq = integer(record, "seq", MAX_INT4);
  const action = record["action"];
  if (typeof action !== "string" || !(CHAOS_ACTIONS as readonly string[]).includes(action)) {
    throw invalid("action", `must be one of ${CHAOS_ACTIONS.join(", ")}`, action);
  }
  const ms = integer(record, "ms", MAX_MS);
  const firstMs = record["firstMs"] === undefined ? undefined : integer(record, "firstMs", MAX_MS);
  return { seq, action: action as ChaosAction, ms, ...(firstMs === undefined ? {} : { firstMs }) };
}

function integer(record: Record<string, unknown>, field: string, max: number): number {
  const value = record[field];
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > max) {
    throw invalid(field, `must be an integer from 0 to ${max}`, value);
  }
  return value;
}

function invalid(field: string, requirement: string, got: unknown): ParseError {
  const shown = got === undefined ? "nothing" : JSON.stringify(got);
  return new ParseError(`${field} ${requirement}, got ${shown}`);
}
