import { ConfigError } from "../errors/config-errors";
import { rejectUnknownOptions } from "../validation/option-checks";
import type { QueueControlsChange } from "./queue-controls";
import { checkRateLimit } from "./rate-limit-text";
import { MAX_RUNNING_CAP } from "../limits";

/**
 * `change`, checked: `paused` a boolean, `maxRunning` a whole number from 1
 * or `null`, `rateLimit` a valid limit or `null`, nothing else.
 *
 * @example
 * ```ts
 * checkControlsChange({ maxRunning: 3 }); // ok
 * checkControlsChange({ maxRunning: 0 }); // throws ConfigError: maxRunning …
 * ```
 */
export function checkControlsChange(change: QueueControlsChange): QueueControlsChange {
  if (typeof change !== "object" || change === null) throw new ConfigError("change", "must be an object");
  rejectUnknownOptions("change", change, ["paused", "maxRunning", "rateLimit"]);
  if (change.paused !== undefined && typeof change.paused !== "boolean") throw new ConfigError("paused", "must be true or false");
  const { maxRunning, rateLimit } = change;
  if (maxRunning !== undefined && maxRunning !== null && (!Number.isInteger(maxRunning) || maxRunning < 1 || maxRunning > MAX_RUNNING_CAP)) {
    throw new ConfigError("maxRunning", `must be a whole number from 1 to ${MAX_RUNNING_CAP}, or null for no cap; got ${String(maxRunning)}`);
  }
  return Object.freeze({
    ...change,
    ...(rateLimit === undefined || rateLimit === null ? {} : { rateLimit: checkRateLimit(rateLimit) }),
  });
}
