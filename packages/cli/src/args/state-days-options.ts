import type { OptionSpec } from "../command";

/** The finished states a retention has days for, with the option that names each. */
export const STATE_DAYS_OPTIONS = [
  ["succeeded", "succeeded-days"],
  ["dead", "dead-days"],
  ["cancelled", "cancelled-days"],
] as const;

/**
 * The days `stint prune` keeps each state when not told: its global
 * retention, where a queue has no days of its own.
 */
export const PRUNE_DEFAULT_DAYS: Readonly<Record<(typeof STATE_DAYS_OPTIONS)[number][0], number>> = Object.freeze({ succeeded: 7, dead: 30, cancelled: 30 });

/**
 * The `--succeeded-days`, `--dead-days` and `--cancelled-days` options of a
 * command, each described by `describe(state)`: `stint prune` and
 * `stint retention` take the same three.
 *
 * @example
 * ```ts
 * options: { ...stateDaysOptions("DAYS", (state) => `delete ${state} jobs finished more than DAYS ago`), batch: { … } }
 * ```
 */
export function stateDaysOptions(value: string, describe: (state: (typeof STATE_DAYS_OPTIONS)[number][0]) => string): Record<string, OptionSpec> {
  return Object.fromEntries(STATE_DAYS_OPTIONS.map(([state, option]) => [option, { type: "string", value, description: describe(state) }]));
}
