import { ConfigError } from "../errors/config-errors";
import { rejectUnknownOptions } from "../validation/option-checks";
import type { QueueControlsChange, QueueRetentionChange } from "./queue-controls";
import { checkRateLimit } from "./rate-limit-text";
import { MAX_RETENTION_DAYS, MAX_RUNNING_CAP } from "../limits";

/**
 * `change`, checked: `paused` a boolean, `maxRunning` and
 * `maxRunningPerGroup` whole numbers from 1 or `null`, `rateLimit` a valid limit or `null`, `retention` (see
 * {@link checkRetentionChange}), nothing else.
 *
 * @example
 * ```ts
 * checkControlsChange({ maxRunning: 3 }); // ok
 * checkControlsChange({ maxRunning: 0 }); // throws ConfigError: maxRunning …
 * ```
 */
export function checkControlsChange(change: QueueControlsChange): QueueControlsChange {
  if (typeof change !== "object" || change === null) throw new ConfigError("change", "must be an object");
  rejectUnknownOptions("change", change, ["paused", "maxRunning", "maxRunningPerGroup", "rateLimit", "retention"]);
  if (change.paused !== undefined && typeof change.paused !== "boolean") throw new ConfigError("paused", "must be true or false");
  const { rateLimit } = change;
  checkCap("maxRunning", change.maxRunning);
  checkCap("maxRunningPerGroup", change.maxRunningPerGroup);
  return Object.freeze({
    ...change,
    ...(rateLimit === undefined || rateLimit === null ? {} : { rateLimit: checkRateLimit(rateLimit) }),
    ...(change.retention === undefined ? {} : { retention: checkRetentionChange(change.retention) }),
  });
}

function checkCap(field: string, cap: number | null | undefined): void {
  if (cap !== undefined && cap !== null && (!Number.isInteger(cap) || cap < 1 || cap > MAX_RUNNING_CAP)) {
    throw new ConfigError(field, `must be a whole number from 1 to ${MAX_RUNNING_CAP}, or null for no cap; got ${String(cap)}`);
  }
}

const RETENTION_FIELDS = ["succeededDays", "deadDays", "cancelledDays"] as const;

/**
 * A queue's retention change, checked: an object of `succeededDays`,
 * `deadDays` and `cancelledDays`, each a whole number of days from 0 to
 * `MAX_RETENTION_DAYS` or `null` (the global setting). The error names the
 * field, as `retention.deadDays`.
 */
export function checkRetentionChange(retention: QueueRetentionChange): QueueRetentionChange {
  if (typeof retention !== "object" || retention === null || Array.isArray(retention)) throw new ConfigError("retention", "must be an object");
  rejectUnknownOptions("retention", retention, RETENTION_FIELDS);
  for (const field of RETENTION_FIELDS) {
    const days = retention[field];
    if (days !== undefined && days !== null && (!Number.isInteger(days) || days < 0 || days > MAX_RETENTION_DAYS)) {
      throw new ConfigError(
        `retention.${field}`,
        `must be a whole number of days from 0 to ${MAX_RETENTION_DAYS}, or null for the global setting; got ${String(days)}`,
      );
    }
  }
  return Object.freeze({ ...retention });
}
