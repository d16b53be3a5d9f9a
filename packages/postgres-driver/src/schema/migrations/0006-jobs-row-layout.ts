import { sql, type RawBuilder } from "kysely";
import { JOBS_AUTOVACUUM, jobsActiveIndexes } from "./jobs-table-parts";
import type { Migration } from "./migration";

/**
 * Version 6: `jobs` is rebuilt so that a job's two hot updates log as few
 * bytes as PostgreSQL allows, and a successful job no longer enters
 * `jobs_finished_idx`.
 *
 * - **Column order.** An update whose new row version stays on its page
 *   logs only the bytes between the first and the last column it changed.
 *   The columns a job never changes after enqueue come first (id, queue,
 *   priority, …, payload, meta); then the claim's columns (`attempts`,
 *   `locked_by`, `started_at`), the ones both updates change (`state`,
 *   `updated_at`, `locked_until`) and the completion's (`finished_at`,
 *   `duration_ms`, `result`); the failure columns and `progress` last. A
 *   claim logs `attempts` … `locked_until`; a completion `state` … `result`;
 *   a heartbeat `updated_at`, `locked_until`.
 * - **`fillfactor = 30`** (was 50): a job's row gets two new versions within
 *   seconds; with less than that room, some land on another page, which
 *   costs a lock record and the whole row in the log.
 * - **`jobs_finished_idx` holds dead and cancelled jobs only.** Succeeded
 *   jobs are most rows and each one's entry cost its completion an index
 *   insert; retention finds old succeeded jobs by walking the primary key
 *   from the oldest id instead.
 *
 * Together these cut the WAL each job writes (see docs/benchmarks.md,
 * Figures behind the code).
 *
 * PostgreSQL cannot reorder columns, so the migration copies the table:
 * it holds an exclusive lock on `jobs` while it copies, so workers and
 * producers wait for it (about a second per 200,000 rows; prune first with
 * `stint prune` to shorten it). Privileges granted on the old table are
 * granted on the new one; the id sequence, the indexes, the checks and the
 * wake-up trigger are recreated as they were, and a table that had rows
 * is analysed.
 */
export const jobsRowLayoutMigration: Migration = Object.freeze({
  version: 6,
  name: "jobs-row-layout",
  statements: (schema: string) => {
    const jobs = sql.id(schema, "jobs");
    const rebuilt = sql.id(schema, "jobs_rebuilt");
    const columns = sql.raw(COLUMNS.join(", "));
    return [
      sql`LOCK TABLE ${jobs} IN ACCESS EXCLUSIVE MODE`,
      sql`CREATE TABLE ${rebuilt} (
  id bigint NOT NULL DEFAULT nextval(${sql.lit(`${quoteIdent(schema)}.jobs_id_seq`)}::regclass),
  queue text NOT NULL CONSTRAINT jobs_queue_check CHECK (char_length(queue) BETWEEN 1 AND 128),
  priority smallint NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 25 CONSTRAINT jobs_max_attempts_check CHECK (max_attempts >= 1),
  timeout_ms integer CONSTRAINT jobs_timeout_ms_check CHECK (timeout_ms > 0),
  run_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  dedupe_key text,
  payload jsonb NOT NULL,
  meta jsonb,
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT jobs_attempts_check CHECK (attempts >= 0),
  locked_by text,
  started_at timestamptz,
  state text NOT NULL DEFAULT 'queued'
    CONSTRAINT jobs_state_check CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'dead', 'cancelled')),
  updated_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  finished_at timestamptz,
  duration_ms integer,
  result jsonb,
  last_error text,
  error_code text,
  progress jsonb,
  CONSTRAINT jobs_running_is_locked CHECK (state <> 'running' OR (locked_by IS NOT NULL AND locked_until IS NOT NULL))
) WITH (
  fillfactor = 30,
  ${JOBS_AUTOVACUUM}
)`,
      sql`INSERT INTO ${rebuilt} (${columns}) SELECT ${columns} FROM ${jobs}`,
      grantAsOn(schema, "jobs", "jobs_rebuilt"),
      sql`ALTER SEQUENCE ${sql.id(schema, "jobs_id_seq")} OWNED BY ${rebuilt}.id`,
      sql`DROP TABLE ${jobs}`,
      sql`ALTER TABLE ${rebuilt} RENAME TO jobs`,
      sql`ALTER TABLE ${jobs} ADD CONSTRAINT jobs_pkey PRIMARY KEY (id)`,
      ...jobsActiveIndexes(jobs),
      sql`CREATE INDEX jobs_finished_idx ON ${jobs} (state, finished_at)
  WHERE state IN ('dead', 'cancelled')`,
      sql`CREATE TRIGGER jobs_notify_inserted
  AFTER INSERT ON ${jobs}
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION ${sql.id(schema, "notify_jobs_inserted")}()`,
      // A copied table starts without statistics; an empty one is left for autovacuum, as a new install's is.
      sql`DO $analyze$ BEGIN IF EXISTS (SELECT FROM ${jobs}) THEN ANALYZE ${jobs}; END IF; END $analyze$`,
    ];
  },
});

/** Every column of `jobs`, in the new order. */
const COLUMNS: readonly string[] = Object.freeze([
  "id",
  "queue",
  "priority",
  "max_attempts",
  "timeout_ms",
  "run_at",
  "created_at",
  "dedupe_key",
  "payload",
  "meta",
  "attempts",
  "locked_by",
  "started_at",
  "state",
  "updated_at",
  "locked_until",
  "finished_at",
  "duration_ms",
  "result",
  "last_error",
  "error_code",
  "progress",
]);

/** Grants on `to` every privilege that roles other than the owner hold on `from` (both in `schema`). */
function grantAsOn(schema: string, from: string, to: string): RawBuilder<unknown> {
  const source = sql.lit(`${quoteIdent(schema)}.${quoteIdent(from)}`);
  const target = sql.lit(`${quoteIdent(schema)}.${quoteIdent(to)}`);
  return sql`DO $grant$
DECLARE
  granted record;
BEGIN
  FOR granted IN
    SELECT acl.privilege_type, acl.grantee, acl.is_grantable
      FROM pg_class AS c, aclexplode(c.relacl) AS acl
     WHERE c.oid = ${source}::regclass AND acl.grantee <> c.relowner
  LOOP
    EXECUTE format('GRANT %s ON %s TO %s%s', granted.privilege_type, ${target},
      CASE WHEN granted.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(granted.grantee)) END,
      CASE WHEN granted.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END
$grant$`;
}

/** `name` as a quoted SQL identifier (schema names are validated before they get here). */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
