import { sql, type RawBuilder } from "kysely";

/**
 * The columns of a job row as of version 26, in `jobs` and `finished_jobs`
 * alike: what the functions of version 26 copy when they move a row. A
 * later column is left to its default by them until a migration replaces
 * them.
 */
const V26_JOB_COLUMNS = [
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
  "start_by",
  "follows",
  "group_key",
  "serial",
  "workflow_id",
  "step",
  "waiting_on",
] as const;

type V26Column = (typeof V26_JOB_COLUMNS)[number];

/** `INSERT INTO <table> (<v26 columns>) SELECT … FROM <source>`, each column copied unless `values` says otherwise. */
function copyRows(table: RawBuilder<unknown>, source: string, values: Partial<Record<V26Column, string>>): RawBuilder<unknown> {
  const selected = V26_JOB_COLUMNS.map((column) => sql.raw(values[column] ?? `${source}.${column}`));
  return sql`INSERT INTO ${table} (${sql.join(V26_JOB_COLUMNS.map((column) => sql.id(column)))})
  SELECT ${sql.join(selected)} FROM ${sql.id(source)}`;
}

/**
 * `join_job_group(queue, key, line)`: what `enter_job_group` (version 23)
 * did for the row that fired it, as a function of its own so that a step
 * that becomes due joins its group the same way (version 26 makes the
 * trigger call it): makes sure the group (or serial line) has its row in
 * `job_groups` and locks it `FOR KEY SHARE` until the transaction ends, so
 * that no claim removes it meanwhile; the first group of a queue also sets
 * `queues.grouped` and adds the queue's `''` turn. Refuses a key used as a
 * group and as a serial line (SQLSTATE 22023). Returns the dead job that
 * holds the line, if any.
 */
export function joinJobGroupFunction(schema: string): RawBuilder<unknown> {
  const groups = sql.id(schema, "job_groups");
  const queues = sql.id(schema, "queues");
  return sql`CREATE FUNCTION ${sql.id(schema, "join_job_group")}(queue_name text, key text, line boolean) RETURNS bigint
LANGUAGE plpgsql AS $function$
DECLARE
  is_line boolean;
  holder bigint;
BEGIN
  LOOP
    SELECT g.serial, g.held_by INTO is_line, holder FROM ${groups} AS g
     WHERE g.queue = queue_name AND g.group_key = key
       FOR KEY SHARE;
    EXIT WHEN FOUND;
    INSERT INTO ${groups} AS g (queue, group_key, serial) VALUES (queue_name, key, line)
      ON CONFLICT DO NOTHING
      RETURNING g.serial, g.held_by INTO is_line, holder;
    IF FOUND THEN
      IF NOT EXISTS (SELECT FROM ${queues} AS q WHERE q.name = queue_name AND q.grouped) THEN
        INSERT INTO ${queues} AS q (name, grouped) VALUES (queue_name, true)
          ON CONFLICT (name) DO UPDATE SET grouped = true, updated_at = now() WHERE NOT q.grouped;
        INSERT INTO ${groups} (queue, group_key) VALUES (queue_name, '') ON CONFLICT DO NOTHING;
      END IF;
      EXIT;
    END IF;
  END LOOP;
  IF is_line <> line THEN
    RAISE EXCEPTION 'key % of queue % is %; a job cannot use it as %', quote_literal(key), quote_literal(queue_name),
      CASE WHEN is_line THEN 'a serial key' ELSE 'a group' END, CASE WHEN is_line THEN 'a group' ELSE 'a serial key' END
      USING ERRCODE = '22023';
  END IF;
  RETURN holder;
END
$function$`;
}

/**
 * `enter_job_group()` as of version 26: the trigger's work is
 * `join_job_group`'s; what stays here is the retried dead job that
 * releases the line it held.
 */
export function enterJobGroupV26Function(schema: string): RawBuilder<unknown> {
  return sql`CREATE OR REPLACE FUNCTION ${sql.id(schema, "enter_job_group")}() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF ${sql.id(schema, "join_job_group")}(NEW.queue, NEW.group_key, NEW.serial IS NOT NULL) = NEW.id THEN
    UPDATE ${sql.id(schema, "job_groups")} AS g SET held_by = NULL WHERE g.queue = NEW.queue AND g.group_key = NEW.group_key AND g.held_by = NEW.id;
  END IF;
  RETURN NULL;
END
$function$`;
}

/**
 * `count_down_steps(ids bigint[])`: each id is a blocked step one of whose
 * dependencies just finished for it (an id appears once per dependency).
 * Its `waiting_on` drops by that many; a step left waiting for nothing
 * becomes `queued`, due at its `run_at`, joins its group if it has one
 * (`join_job_group`, as the trigger on insert does for a new job) and wakes
 * the queue's listening workers.
 *
 * The steps are locked in id order first, so that two statements counting
 * down the same steps (two dependencies finishing at once, in two
 * processes) wait for each other in one order and never deadlock; the
 * second then counts from what the first wrote. The step is updated in
 * place: a statement waiting for its lock (a cancel of its workflow) then
 * finds it in its new state rather than gone.
 */
export function countDownStepsFunction(schema: string): RawBuilder<unknown> {
  const jobs = sql.id(schema, "jobs");
  return sql`CREATE FUNCTION ${sql.id(schema, "count_down_steps")}(ids bigint[], wakeup_channel text) RETURNS integer
LANGUAGE plpgsql AS $function$
DECLARE
  started integer;
  queues text[];
  keys text[];
  lines boolean[];
  dues boolean[];
  entry record;
BEGIN
  PERFORM FROM ${jobs} AS j WHERE j.id = ANY(ids) AND j.state = 'blocked' ORDER BY j.id FOR NO KEY UPDATE;
  WITH counted AS (
    SELECT c.id, count(*)::integer AS n FROM unnest(ids) AS c(id) GROUP BY c.id
  ),
  changed AS (
    UPDATE ${jobs} AS j
       SET waiting_on = j.waiting_on - counted.n,
           state = CASE WHEN j.waiting_on <= counted.n THEN 'queued' ELSE 'blocked' END,
           updated_at = now()
      FROM counted
     WHERE j.id = counted.id AND j.state = 'blocked'
    RETURNING j.queue, j.group_key, j.serial IS NOT NULL AS line, j.run_at <= now() AS due, j.state
  )
  SELECT count(*)::integer, array_agg(changed.queue), array_agg(changed.group_key), array_agg(changed.line), array_agg(changed.due)
    INTO started, queues, keys, lines, dues
    FROM changed WHERE changed.state = 'queued';
  IF started = 0 THEN
    RETURN 0;
  END IF;
  FOR entry IN SELECT DISTINCT u.queue, u.group_key, u.line FROM unnest(queues, keys, lines) AS u(queue, group_key, line)
                WHERE u.group_key <> '' ORDER BY u.queue, u.group_key LOOP
    PERFORM ${sql.id(schema, "join_job_group")}(entry.queue, entry.group_key, entry.line);
  END LOOP;
  -- As the wake-up trigger on insert does: one notification per queue and transaction, sent at commit.
  PERFORM pg_notify(wakeup_channel, u.queue) FROM (SELECT DISTINCT d.queue FROM unnest(queues, dues) AS d(queue, due) WHERE d.due) AS u;
  RETURN started;
END
$function$`;
}

/**
 * `settle_failed_step()`, the trigger on `finished_jobs` for a workflow
 * step that ends `dead` or `cancelled`, whatever ended it (its last
 * attempt, a lease rescue, an operator, an expiry, a cancelled workflow).
 *
 * - A step waiting for it with `ignore_failed` counts it as finished:
 *   the dependency is settled and the step counted down (`count_down_steps`).
 * - Every other blocked step waiting for it, and every blocked step
 *   waiting for one of those (transitively, through dependencies without
 *   `ignore_failed`), is cancelled in one statement, with
 *   `STINT_DEPENDENCY_FAILED` and a reason naming this step (or, in a
 *   workflow an operator cancelled, `STINT_CANCELLED`: retrying a step does
 *   not bring those back). Their own
 *   rows in `finished_jobs` fire this trigger again, which finds nothing
 *   left to cancel and settles their `ignore_failed` dependents: the
 *   nesting is two deep however long the chain.
 *
 * Waiters of the cancelled steps (`client.waitFor`) are told as a cancel
 * tells them.
 */
export function settleFailedStepFunction(schema: string): RawBuilder<unknown> {
  const jobs = sql.id(schema, "jobs");
  const deps = sql.id(schema, "workflow_deps");
  const finished = sql.id(schema, "finished_jobs");
  return sql`CREATE FUNCTION ${sql.id(schema, "settle_failed_step")}() RETURNS trigger
LANGUAGE plpgsql AS $function$
DECLARE
  ids bigint[];
  reason text := format('cancelled: step %s (job %s) that it waits for is %s', to_json(NEW.step)::text, NEW.id, NEW.state);
  code text := 'STINT_DEPENDENCY_FAILED';
BEGIN
  IF EXISTS (SELECT FROM ${sql.id(schema, "workflows")} AS w WHERE w.id = NEW.workflow_id AND w.cancelled_at IS NOT NULL) THEN
    reason := 'the workflow was cancelled';
    code := 'STINT_CANCELLED';
  END IF;
  WITH settled AS (
    UPDATE ${deps} AS d SET settled = true
     WHERE d.needs_id = NEW.id AND d.ignore_failed AND NOT d.settled
    RETURNING d.job_id
  )
  SELECT array_agg(settled.job_id) INTO ids FROM settled;
  IF ids IS NOT NULL THEN
    PERFORM ${sql.id(schema, "count_down_steps")}(ids, left('stint_jobs_' || TG_TABLE_SCHEMA, 63));
  END IF;
  WITH RECURSIVE doomed(id) AS (
    SELECT d.job_id FROM ${deps} AS d WHERE d.needs_id = NEW.id AND NOT d.ignore_failed
    UNION
    SELECT d.job_id FROM doomed JOIN ${deps} AS d ON d.needs_id = doomed.id WHERE NOT d.ignore_failed
  ),
  removed AS (
    DELETE FROM ${jobs} AS j WHERE j.id = ANY(ARRAY(SELECT doomed.id FROM doomed)) AND j.state = 'blocked'
    RETURNING j.*
  ),
  moved AS (
    ${copyRows(finished, "removed", {
      state: "'cancelled'",
      finished_at: "now()",
      updated_at: "now()",
      locked_until: "NULL",
      last_error: "reason",
      error_code: "code",
    })}
    RETURNING id
  )
  SELECT array_agg(moved.id) INTO ids FROM moved;
  IF ids IS NOT NULL THEN
    -- The channel of completionChannel(schema), from the trigger's own schema: the function's text names no schema's channel.
    PERFORM ${sql.id(schema, "notify_awaited")}(left('stint_done_' || TG_TABLE_SCHEMA, 63), ids);
  END IF;
  RETURN NULL;
END
$function$`;
}

/**
 * `resume_requeued_step()`, the trigger on `finished_jobs` for a deleted
 * workflow step. A step deleted by retention is gone from `jobs` too, and
 * the trigger does nothing. A step deleted because it was retried (it is
 * back in `jobs`, put there by the same statement):
 *
 * - waits again for whatever it waits for that has not finished for it:
 *   its dependencies are locked (so that one finishing at this moment is
 *   counted either here or by its own statement, never by neither) and
 *   counted, and the step is `blocked` if any is left;
 * - brings back every step that was cancelled because it failed
 *   (`STINT_DEPENDENCY_FAILED`, through dependencies without
 *   `ignore_failed`, transitively), `blocked`. Each of those fires this
 *   trigger in turn and counts what it waits for.
 *
 * So retrying a dead step resumes its workflow from there.
 */
export function resumeRequeuedStepFunction(schema: string): RawBuilder<unknown> {
  const jobs = sql.id(schema, "jobs");
  const deps = sql.id(schema, "workflow_deps");
  const finished = sql.id(schema, "finished_jobs");
  const cancelledForIt = (alias: string) => sql.raw(`${alias}.state = 'cancelled' AND ${alias}.error_code = 'STINT_DEPENDENCY_FAILED'`);
  return sql`CREATE FUNCTION ${sql.id(schema, "resume_requeued_step")}() RETURNS trigger
LANGUAGE plpgsql AS $function$
DECLARE
  waiting integer;
BEGIN
  IF NOT EXISTS (SELECT FROM ${jobs} AS j WHERE j.id = OLD.id) THEN
    RETURN NULL;
  END IF;
  SELECT count(*) FILTER (WHERE NOT d.settled) INTO waiting
    FROM (SELECT d.settled FROM ${deps} AS d WHERE d.job_id = OLD.id FOR UPDATE) AS d;
  UPDATE ${jobs} AS j
     SET waiting_on = waiting,
         state = CASE WHEN waiting > 0 THEN 'blocked' WHEN j.state = 'blocked' THEN 'queued' ELSE j.state END
   WHERE j.id = OLD.id AND j.state IN ('blocked', 'queued', 'failed');
  WITH RECURSIVE revived(id) AS (
    SELECT f.id FROM ${deps} AS d JOIN ${finished} AS f ON f.id = d.job_id
     WHERE d.needs_id = OLD.id AND NOT d.ignore_failed AND ${cancelledForIt("f")}
    UNION
    SELECT f.id FROM revived JOIN ${deps} AS d ON d.needs_id = revived.id JOIN ${finished} AS f ON f.id = d.job_id
     WHERE NOT d.ignore_failed AND ${cancelledForIt("f")}
  ),
  removed AS (
    DELETE FROM ${finished} AS f WHERE f.id = ANY(ARRAY(SELECT revived.id FROM revived)) AND ${cancelledForIt("f")}
    RETURNING f.*
  )
  ${copyRows(jobs, "removed", {
    state: "'blocked'",
    finished_at: "NULL",
    updated_at: "now()",
    last_error: "NULL",
    error_code: "NULL",
  })};
  RETURN NULL;
END
$function$`;
}
