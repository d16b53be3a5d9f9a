import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 9: `dead_hooks`, the deaths whose `onDead` hook has not run yet.
 *
 * Every statement that makes a job `dead` (a worker's `markJobsDead`, the
 * lease rescue's `rescueExpiredLeases`) inserts one row here for that death
 * — `(job_id, attempt)` — in the same statement, so the row exists if and
 * only if the death committed. A worker of the job's queue claims rows
 * (`locked_by`, `locked_until`, `deliveries + 1`), calls its hook, and
 * deletes the row, fenced on its own claim; a row whose claim lapsed (its
 * worker died inside the hook) is claimed again. It also keeps the death's
 * `error_code` and `last_error`, so the hook gets them even when the job
 * was retried and failed differently since.
 *
 * `locked_until` starts at `-infinity` (never claimed), so
 * `dead_hooks_claim_idx` serves the claim as one range scan of
 * `locked_until < now()`. Successful jobs never touch this table; a dead
 * job costs one more row insert, and its hook a claim and a delete. No
 * foreign key to `jobs`: its check would cost every delete of a job (the
 * retention's included) a lookup here; a row whose job is gone is deleted
 * by the claim that finds it.
 */
export const deadHooksMigration: Migration = Object.freeze({
  version: 9,
  name: "dead-hooks",
  statements: (schema: string) => {
    const hooks = sql.id(schema, "dead_hooks");
    return [
      sql`CREATE TABLE ${hooks} (
  job_id bigint NOT NULL,
  attempt integer NOT NULL,
  queue text NOT NULL,
  died_at timestamptz NOT NULL DEFAULT now(),
  error_code text,
  last_error text,
  locked_by text,
  locked_until timestamptz NOT NULL DEFAULT '-infinity',
  deliveries integer NOT NULL DEFAULT 0,
  CONSTRAINT dead_hooks_pkey PRIMARY KEY (job_id, attempt)
)`,
      sql`CREATE INDEX dead_hooks_claim_idx ON ${hooks} (queue, locked_until)`,
    ];
  },
});
