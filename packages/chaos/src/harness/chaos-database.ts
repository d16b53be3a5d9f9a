import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { sql, type RawBuilder } from "kysely";

/** A scenario's own migrated schema, with the oracle tables and the audit trigger in it. */
export type ChaosDatabase = TestSchema;

/**
 * Creates a fresh stint schema for one scenario and adds, next to `jobs`:
 *
 * - `chaos_executions` — one row per handler run, written by the handler on
 *   the oracle's own autocommit connection before it does anything else
 *   (a `sleep-timed` run also records when and how it ended);
 * - `chaos_effect_runs` — one row per run of a `ctx.once` effect body (what
 *   an e-mail provider would have seen), on the same connection;
 * - `chaos_effects`, `chaos_ledger` — rows written inside `ctx.once` and
 *   `ctx.transaction`, which must exist exactly once per job;
 * - `chaos_outbox` — markers written in the same transaction as a
 *   transactional enqueue;
 * - `chaos_leases` — every lease a worker set on a running job (claim or
 *   heartbeat): who, which attempt, and until when, by a trigger;
 * - `chaos_transitions` — an append-only audit of every accepted change of
 *   a job's state, attempts or owner (and of deletions), written by triggers
 *   inside the changing transaction, so it holds exactly the committed ones.
 *   A job that finishes leaves `jobs` for `finished_jobs` in one statement:
 *   its row's departure is recorded as `leave`, and its arrival as the
 *   `update` from the state it left in to the state it finished in, so a
 *   finish reads as it did when it was an update in place. A workflow step
 *   that stops being blocked leaves `jobs` and comes back to it in one
 *   statement, recorded the same way (an `update` from `blocked` to
 *   `queued`). A `leave` with no such arrival in its transaction is a
 *   deletion, as is a `delete` from `finished_jobs`; a row that arrives
 *   from elsewhere (a step as its workflow is enqueued) is an `arrive`.
 */
export async function createChaosDatabase(connectionString: string): Promise<ChaosDatabase> {
  const database = await createTestSchema({ connectionString, prefix: "chaos", maxConnections: 6, onPoolError: () => undefined });
  try {
    for (const statement of oracleStatements(database.schema)) await statement.execute(database.db);
  } catch (thrown) {
    await database.drop().catch(() => undefined);
    throw thrown;
  }
  return database;
}

function oracleStatements(schema: string): RawBuilder<unknown>[] {
  const table = (name: string) => sql.id(schema, name);
  const audit = sql.id(schema, "chaos_audit");
  const leases = sql.id(schema, "chaos_lease_audit");
  return [
    sql`CREATE TABLE ${table("chaos_executions")} (
          token uuid PRIMARY KEY, job_id bigint NOT NULL, seq integer NOT NULL, attempt integer NOT NULL,
          worker_id text NOT NULL, pid integer NOT NULL, action text NOT NULL, marker_visible boolean NOT NULL,
          started_at timestamptz NOT NULL DEFAULT clock_timestamp(), ended_at timestamptz, ended_how text)`,
    sql`CREATE INDEX ON ${table("chaos_executions")} (job_id)`,
    sql`CREATE TABLE ${table("chaos_effect_runs")} (
          token uuid PRIMARY KEY, job_id bigint NOT NULL, seq integer NOT NULL, attempt integer NOT NULL,
          at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    sql`CREATE TABLE ${table("chaos_effects")} (
          seq integer NOT NULL, job_id bigint NOT NULL, attempt integer NOT NULL, worker_id text NOT NULL)`,
    sql`CREATE TABLE ${table("chaos_ledger")} (
          seq integer NOT NULL, job_id bigint NOT NULL, attempt integer NOT NULL, worker_id text NOT NULL)`,
    sql`CREATE TABLE ${table("chaos_outbox")} (seq integer PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    sql`CREATE TABLE ${table("chaos_transitions")} (
          id bigserial PRIMARY KEY, job_id bigint NOT NULL, op text NOT NULL,
          old_state text, new_state text, old_attempts integer, new_attempts integer, max_attempts integer,
          locked_by text, locked_until timestamptz, run_at timestamptz, updated_at timestamptz, started_at timestamptz, error_code text,
          xact bigint NOT NULL DEFAULT txid_current(), at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    sql`CREATE INDEX ON ${table("chaos_transitions")} (job_id, id)`,
    // The departure is recorded BEFORE the row goes, so it is there when the arrival of the same statement looks for it.
    sql`CREATE FUNCTION ${audit}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          left_as record;
          moved boolean;
        BEGIN
          IF TG_OP = 'DELETE' THEN
            INSERT INTO ${table("chaos_transitions")} (job_id, op, old_state, old_attempts, max_attempts, locked_by)
            VALUES (OLD.id, CASE WHEN TG_TABLE_NAME = 'jobs' THEN 'leave' ELSE 'delete' END, OLD.state, OLD.attempts, OLD.max_attempts, OLD.locked_by);
            RETURN OLD;
          END IF;
          IF TG_OP = 'INSERT' THEN
            SELECT old_state AS state, old_attempts AS attempts INTO left_as FROM ${table("chaos_transitions")}
             WHERE job_id = NEW.id AND op = 'leave' AND xact = txid_current() ORDER BY id DESC LIMIT 1;
            moved := FOUND;
            INSERT INTO ${table("chaos_transitions")}
                   (job_id, op, old_state, new_state, old_attempts, new_attempts, max_attempts,
                    locked_by, locked_until, run_at, updated_at, started_at, error_code)
            VALUES (NEW.id, CASE WHEN moved THEN 'update' ELSE 'arrive' END, left_as.state, NEW.state, left_as.attempts, NEW.attempts,
                    NEW.max_attempts, NEW.locked_by, NEW.locked_until, NEW.run_at, NEW.updated_at, NEW.started_at, NEW.error_code);
            RETURN NEW;
          END IF;
          INSERT INTO ${table("chaos_transitions")}
                 (job_id, op, old_state, new_state, old_attempts, new_attempts, max_attempts,
                  locked_by, locked_until, run_at, updated_at, started_at, error_code)
          VALUES (NEW.id, 'update', OLD.state, NEW.state, OLD.attempts, NEW.attempts, NEW.max_attempts,
                  NEW.locked_by, NEW.locked_until, NEW.run_at, NEW.updated_at, NEW.started_at, NEW.error_code);
          RETURN NEW;
        END $$`,
    sql`CREATE TRIGGER chaos_audit_update AFTER UPDATE ON ${table("jobs")} FOR EACH ROW
        WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.attempts IS DISTINCT FROM NEW.attempts
              OR OLD.locked_by IS DISTINCT FROM NEW.locked_by)
        EXECUTE FUNCTION ${audit}()`,
    sql`CREATE TABLE ${table("chaos_leases")} (
          job_id bigint NOT NULL, attempt integer NOT NULL, locked_by text NOT NULL, locked_until timestamptz NOT NULL,
          at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    sql`CREATE INDEX ON ${table("chaos_leases")} (job_id, attempt)`,
    sql`CREATE FUNCTION ${leases}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO ${table("chaos_leases")} (job_id, attempt, locked_by, locked_until)
          VALUES (NEW.id, NEW.attempts, NEW.locked_by, NEW.locked_until);
          RETURN NEW;
        END $$`,
    sql`CREATE TRIGGER chaos_leases_update AFTER UPDATE ON ${table("jobs")} FOR EACH ROW
        WHEN (NEW.state = 'running' AND NEW.locked_until IS DISTINCT FROM OLD.locked_until)
        EXECUTE FUNCTION ${leases}()`,
    sql`CREATE TRIGGER chaos_audit_leave BEFORE DELETE ON ${table("jobs")} FOR EACH ROW EXECUTE FUNCTION ${audit}()`,
    sql`CREATE TRIGGER chaos_audit_finish AFTER INSERT ON ${table("finished_jobs")} FOR EACH ROW EXECUTE FUNCTION ${audit}()`,
    // A workflow step that stops being blocked leaves jobs and comes back as queued in one statement: that pair is its
    // transition from blocked to queued, not a deletion.
    sql`CREATE TRIGGER chaos_audit_step AFTER INSERT ON ${table("jobs")} FOR EACH ROW WHEN (NEW.workflow_id IS NOT NULL)
        EXECUTE FUNCTION ${audit}()`,
    sql`CREATE TRIGGER chaos_audit_delete AFTER DELETE ON ${table("finished_jobs")} FOR EACH ROW EXECUTE FUNCTION ${audit}()`,
  ];
}
