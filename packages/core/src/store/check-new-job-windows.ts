import { ConfigError } from "../errors/config-errors";
import { MAX_DEDUPE_KEY_LENGTH, MAX_EXPIRE_IN_MS, MAX_GROUP_KEY_LENGTH, MAX_UNIQUE_FOR_MS } from "../limits";
import { assertStorableKey } from "../validation/names";
import { integerOption } from "../validation/option-checks";
import type { NewJob } from "./job-store";

/**
 * Checks a job's unique window: an object with a storable `key` (as a
 * dedupe key is) and a whole `forMs` from 1 ms to `MAX_UNIQUE_FOR_MS`,
 * and no `dedupeKey` beside it (the two say "once" in two ways; a job
 * takes one).
 *
 * @example
 * ```ts
 * checkUniqueWindow({ ...job, unique: { key: "digest:7", forMs: 0 } }); // ConfigError: unique.forMs must be an integer from 1 to …
 * ```
 */
export function checkUniqueWindow(job: NewJob): void {
  const unique: unknown = job.unique;
  if (unique === undefined || unique === null) return;
  if (typeof unique !== "object" || Array.isArray(unique)) throw new ConfigError("unique", "must be an object { key, forMs }");
  const { key, forMs, ...rest } = unique as { key?: unknown; forMs?: unknown };
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new ConfigError("unique", `takes key and forMs, got ${extra.map((name) => JSON.stringify(name)).join(", ")} too`);
  assertStorableKey("unique.key", key, MAX_DEDUPE_KEY_LENGTH);
  integerOption("unique.forMs", forMs, 1, MAX_UNIQUE_FOR_MS);
  if (job.dedupeKey !== null && job.dedupeKey !== undefined)
    throw new ConfigError("unique", "takes no dedupeKey beside it: a job is kept once by one or the other");
}

/**
 * Checks a job's expiry: `startBy` a valid `Date` or `expireInMs` a whole
 * number from 1 ms to `MAX_EXPIRE_IN_MS`, not both.
 *
 * @example
 * ```ts
 * checkExpiry({ ...job, startBy: new Date(), expireInMs: 1_000 }); // ConfigError: startBy takes no expireInMs beside it
 * ```
 */
export function checkExpiry(job: NewJob): void {
  const startBy: unknown = job.startBy;
  const expireInMs: unknown = job.expireInMs;
  const hasStartBy = startBy !== undefined && startBy !== null;
  const hasExpireIn = expireInMs !== undefined && expireInMs !== null;
  if (hasStartBy && !(startBy instanceof Date && Number.isFinite(startBy.getTime()))) throw new ConfigError("startBy", "must be a valid Date");
  if (hasExpireIn) integerOption("expireInMs", expireInMs, 1, MAX_EXPIRE_IN_MS);
  if (hasStartBy && hasExpireIn) throw new ConfigError("startBy", "takes no expireInMs beside it: give the deadline one way");
}

/**
 * Checks a job's group: a storable `groupKey` of at most
 * `MAX_GROUP_KEY_LENGTH` characters, and `serial` only with one
 * (`"hold"` or `"release"`).
 *
 * @example
 * ```ts
 * checkGroup({ ...job, groupKey: "" }); // ConfigError: groupKey must be …
 * ```
 */
export function checkGroup(job: NewJob): void {
  const { groupKey, serial } = job;
  const field = serial === undefined || serial === null ? "group" : "serialKey";
  if (groupKey !== undefined && groupKey !== null) assertStorableKey(field, groupKey, MAX_GROUP_KEY_LENGTH);
  if (serial === undefined || serial === null) return;
  if (serial !== "hold" && serial !== "release") throw new ConfigError("serialOnDead", `must be "hold" or "release", got ${JSON.stringify(serial)}`);
  if (groupKey === undefined || groupKey === null) throw new ConfigError("serialOnDead", "needs a serialKey");
}
