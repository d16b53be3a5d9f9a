/**
 * Where a run's queue controls are, as `--print-config` shows them: pause,
 * the running caps (`max-running`, `max-running-per-group`) and the rate
 * limit live in the database, where every worker reads them at its claims;
 * `--print-config` connects to no database, so it points to the commands
 * that show them.
 *
 * @example
 * ```ts
 * QUEUE_CONTROLS_ROW; // ["in the database, not read here", "stint status; stint limit <queue>; stint groups <queue>"]
 * ```
 */
export const QUEUE_CONTROLS_ROW: readonly [string, string] = Object.freeze([
  "in the database, not read here",
  "stint status; stint limit <queue>; stint groups <queue>",
] as const);

/** {@link QUEUE_CONTROLS_ROW} as the `queueControls` field of `--print-config --json`. */
export const QUEUE_CONTROLS_NOTE =
  "in the database, not read here: stint status (paused, max running, max per group, rate limit), stint limit <queue>, stint groups <queue>";
