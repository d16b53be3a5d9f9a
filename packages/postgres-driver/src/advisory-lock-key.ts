import { createHash } from "node:crypto";

/**
 * A 64-bit key for PostgreSQL's advisory lock functions, derived from a
 * name: the first 8 bytes of its SHA-256, as a signed bigint in decimal
 * (pass it as `$1::bigint`). Stable across processes and versions, so every
 * process that names the same lock takes the same key.
 *
 * @example
 * ```ts
 * advisoryLockKey("stint:leader:stint:maintenance"); // "-4817…" (always the same for this name)
 * await sql`SELECT pg_try_advisory_lock(${advisoryLockKey(name)}::bigint)`.execute(db);
 * ```
 */
export function advisoryLockKey(name: string): string {
  return createHash("sha256").update(name).digest().readBigInt64BE(0).toString();
}
