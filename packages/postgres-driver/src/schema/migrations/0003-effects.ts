import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 3: the effects ledger behind `ctx.once`.
 *
 * - `effects` — one row per side-effect key that has been carried out,
 *   written in the same transaction as the effect's own writes, with the
 *   effect's result (JSON) and the job that did it. The primary key is what
 *   makes a second transaction with the same key wait and then find the row.
 * - `effects_created_at_idx` — retention deletes the oldest rows by range.
 *
 * `job_id` is informational (no foreign key): a ledger row must outlive the
 * job that wrote it, since a later job may repeat the key.
 */
export const effectsMigration: Migration = Object.freeze({
  version: 3,
  name: "effects",
  statements: (schema: string) => {
    const effects = sql.id(schema, "effects");
    return [
      sql`CREATE TABLE ${effects} (
  key text PRIMARY KEY CONSTRAINT effects_key_check CHECK (char_length(key) BETWEEN 1 AND 512),
  job_id bigint,
  result jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
)`,
      sql`CREATE INDEX effects_created_at_idx ON ${effects} (created_at)`,
    ];
  },
});
