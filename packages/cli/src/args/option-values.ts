import { JOB_STATES, type JobState } from "@stint/core";
import { configError, usageError } from "../cli-error";

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * Reads an integer option; a `configError` (exit 78) naming it when the
 * text is not an integer in `[min, max]`.
 *
 * @example
 * ```ts
 * integerValue("--limit", "50", 1, 10_000); // 50
 * ```
 */
export function integerValue(option: string, text: string, min: number, max: number): number {
  const value = INTEGER.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw configError(`${option} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Reads a non-negative decimal number (such as days: `7`, `0.5`); exit 78 naming the option otherwise. */
export function decimalValue(option: string, text: string, max: number): number {
  const value = DECIMAL.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || value > max) {
    throw configError(`${option} must be a number from 0 to ${max}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Reads a comma-separated list of job states; exit 78 naming the unknown one. */
export function statesValue(option: string, text: string): JobState[] {
  const states = text
    .split(",")
    .map((state) => state.trim())
    .filter((state) => state !== "");
  for (const state of states) {
    if (!(JOB_STATES as readonly string[]).includes(state)) {
      throw configError(`${option}: unknown state ${JSON.stringify(state)} (states: ${JOB_STATES.join(", ")})`);
    }
  }
  if (states.length === 0) throw configError(`${option} needs at least one state (states: ${JOB_STATES.join(", ")})`);
  return [...new Set(states)] as JobState[];
}

/** Reads an ISO 8601 time; exit 78 naming the option otherwise. */
export function timeValue(option: string, text: string): Date {
  const iso = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
  const date = new Date(text);
  if (!iso.test(text.trim()) || !Number.isFinite(date.getTime())) {
    throw configError(`${option} must be an ISO 8601 time such as 2030-01-31T09:00:00Z, got ${JSON.stringify(text)}`);
  }
  return date;
}

/** Reads a job id (a positive integer); a usage error is the caller's to raise, this returns undefined. */
export function jobIdValue(text: string): string | undefined {
  return /^[1-9]\d{0,18}$/.test(text) ? text : undefined;
}

/**
 * Reads `--before-id` of a list, newest first (the last id of the page
 * before): an id of `noun`, undefined when not given; anything else is a
 * configuration error.
 */
export function beforeIdOption(text: string | undefined, noun: "job" | "workflow"): string | undefined {
  if (text === undefined) return undefined;
  const id = jobIdValue(text);
  if (id === undefined) throw configError(`--before-id must be a ${noun} id (a positive integer), got ${JSON.stringify(text)}`);
  return id;
}

/** Reads a job id given as an argument; anything else is a usage error (exit 2) that quotes it. */
export function jobIdArgument(text: string): string {
  const id = jobIdValue(text);
  if (id === undefined) throw usageError(`job id must be a positive integer, got ${JSON.stringify(text)}`);
  return id;
}
