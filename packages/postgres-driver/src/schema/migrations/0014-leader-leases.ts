import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 14: `leader_leases`, one row per leader lock, for processes whose
 * connection cannot hold a session (behind a transaction pooler). The
 * holder renews `expires_at` while it leads; another process takes the row
 * over once it has expired, so a crashed leader is replaced after one
 * lease. Processes on a direct connection keep using the advisory lock and
 * never write here. UNLOGGED: after a crash every lease is gone, as every
 * advisory lock is.
 */
export const leaderLeasesMigration: Migration = Object.freeze({
  version: 14,
  name: "leader-leases",
  statements: (schema: string) => [
    sql`CREATE UNLOGGED TABLE ${sql.id(schema, "leader_leases")} (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
)`,
  ],
});
