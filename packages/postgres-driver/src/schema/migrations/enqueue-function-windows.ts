import { sql, type RawBuilder } from "kysely";
import { notifyEnqueued, NOT_ASTRAL, shown } from "./enqueue-function-statement";

/** The pieces version 21 adds to the text of `enqueue(…)`, each in its place (see `enqueueFunctionStatement`). */
export interface WindowParts {
  /** After `max_payload_bytes`: the four new parameters. */
  readonly parameters: RawBuilder<unknown>;
  readonly declarations: RawBuilder<unknown>;
  /** The new parameters' checks, before `max_payload_bytes`' own. */
  readonly checks: RawBuilder<unknown>;
  /** After `job_run_at` is known: the deadline, and the whole of an enqueue with a unique window. */
  readonly window: RawBuilder<unknown>;
  /** replace and debounce: the `follows` column and its value, appended to their insert. */
  readonly followsColumn: RawBuilder<unknown>;
  readonly followsValue: RawBuilder<unknown>;
  /** The `start_by` column and its value, appended to each insert. */
  readonly column: RawBuilder<unknown>;
  readonly value: RawBuilder<unknown>;
  /** replace and debounce: a holder that has started gives its key up first. */
  readonly release: RawBuilder<unknown>;
  /** replace and debounce: the replaced holder's deadline. */
  readonly replaceStartBy: RawBuilder<unknown>;
  /** replace and debounce: when neither inserted nor replaced, the holder started meanwhile; go round. */
  readonly replaceAgain: RawBuilder<unknown>;
}

/** The longest `unique_for` and `expire_in`, in ms: the library's `MAX_UNIQUE_FOR_MS` and `MAX_EXPIRE_IN_MS` (3650 days). */
const LONGEST_MS = 315_360_000_000;

/**
 * The parts of version 21's `enqueue(…)`: `unique_key` and `unique_for`
 * (a unique window, as `unique: { key, forMs }`), `start_by` and
 * `expire_in` (a start-by deadline, as `startBy` and `expireInMs`), and
 * the follow-up run that `replace` and `debounce` give a holder that has
 * started. Checked as the library checks them, each refusal naming its
 * parameter (SQLSTATE 22023, `COLUMN`).
 *
 * @example
 * ```ts
 * enqueueFunctionStatement("stint", { events: true, windows: true }); // uses windowParts("stint")
 * ```
 */
export function windowParts(schema: string, groups?: { readonly column: RawBuilder<unknown>; readonly value: RawBuilder<unknown> }): WindowParts {
  const jobs = sql.id(schema, "jobs");
  const windows = sql.id(schema, "unique_windows");
  const sequence = sql.lit(`"${schema}".jobs_id_seq`);
  return {
    parameters: sql`,
  unique_key text DEFAULT NULL,
  unique_for interval DEFAULT NULL,
  start_by timestamptz DEFAULT NULL,
  expire_in interval DEFAULT NULL`,
    declarations: sql`  job_start_by timestamptz;
  job_follows bigint;
  job_window_ms numeric;
  window_id bigint;
  window_job bigint;
`,
    checks: sql`  IF enqueue.unique_key IS NOT NULL AND (enqueue.unique_key = '' OR
      char_length(enqueue.unique_key) > 256 AND char_length(enqueue.unique_key)
        + char_length(regexp_replace(enqueue.unique_key, ${sql.lit(NOT_ASTRAL)}, '', 'g')) > 512) THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'unique_key', MESSAGE = format(
      'unique_key must be a non-empty text of at most 512 characters (UTF-16 code units), got %s', ${shown(sql`enqueue.unique_key`)});
  END IF;
  IF (enqueue.unique_key IS NULL) <> (enqueue.unique_for IS NULL) THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = CASE WHEN enqueue.unique_key IS NULL THEN 'unique_key' ELSE 'unique_for' END,
      MESSAGE = 'unique_key and unique_for go together: a unique window needs a key and a length';
  END IF;
${wholeMilliseconds("unique_for")}  IF enqueue.unique_key IS NOT NULL AND enqueue.dedupe_key IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'unique_key',
      MESSAGE = 'unique_key takes no dedupe_key beside it: a job is kept once by one or the other';
  END IF;
  IF enqueue.start_by IS NOT NULL AND NOT isfinite(enqueue.start_by) THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'start_by', MESSAGE = format('start_by must be a finite time, got %s', enqueue.start_by);
  END IF;
${wholeMilliseconds("expire_in")}  IF enqueue.start_by IS NOT NULL AND enqueue.expire_in IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'start_by', MESSAGE = 'start_by takes no expire_in beside it: give the deadline one way';
  END IF;
`,
    window: sql`  job_start_by := coalesce(enqueue.start_by, job_run_at + enqueue.expire_in);
  IF enqueue.unique_key IS NOT NULL THEN
    -- The window row's primary key makes concurrent enqueues of one key take turns. An insert that waited for another
    -- transaction's window finds it below, on a snapshot taken after the wait; a closed window is taken over.
    FOR turn IN 1..10 LOOP
      window_id := nextval(${sequence}::regclass);
      INSERT INTO ${windows} AS w (queue, key, job_id, until)
      VALUES (enqueue.queue, enqueue.unique_key, window_id, now() + enqueue.unique_for)
      ON CONFLICT (queue, key) DO UPDATE SET job_id = excluded.job_id, until = excluded.until WHERE w.until <= now()
      RETURNING w.job_id INTO window_job;
      IF window_job IS NOT NULL THEN
        INSERT INTO ${jobs} (id, queue, payload, priority, max_attempts, timeout_ms, run_at, meta, start_by${groups?.column ?? sql``})
        VALUES (window_id, enqueue.queue, enqueue.payload, job_priority, job_max_attempts, job_timeout_ms, job_run_at, job_meta, job_start_by${groups?.value ?? sql``});
        job_id := window_id;
        ${notifyEnqueued(schema, "        ")}
        RETURN job_id;
      END IF;
      SELECT w.job_id INTO window_job FROM ${windows} AS w
       WHERE w.queue = enqueue.queue AND w.key = enqueue.unique_key AND w.until > now();
      IF window_job IS NOT NULL THEN
        RETURN window_job;
      END IF;
    END LOOP;
    RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = format(
      'enqueue gave up after 10 tries: the unique key %s of queue %s kept changing hands', to_json(enqueue.unique_key), to_json(enqueue.queue));
  END IF;
`,
    column: sql`, start_by`,
    value: sql`, job_start_by`,
    release: sql`      -- replace and debounce: a holder that has started (running, or failed and waiting for its retry) gives its key up
      -- and this job becomes its one follow-up; a queued holder takes this job's fields.
      -- A claim leaves the follow-up while the job it follows is active.
      UPDATE ${jobs} AS held SET dedupe_key = NULL, updated_at = now()
       WHERE held.queue = enqueue.queue AND held.dedupe_key = enqueue.dedupe_key AND held.state IN ('running', 'failed')
      RETURNING held.id INTO job_follows;
`,
    followsColumn: sql`, follows`,
    followsValue: sql`, job_follows`,
    replaceStartBy: sql`start_by = excluded.start_by, `,
    replaceAgain: sql`    IF job_mode <> 'keep' THEN
      -- The queued holder started between the release and the insert: go round, and this job becomes its follow-up.
      CONTINUE;
    END IF;
`,
  };
}

/** The check that an interval parameter is whole milliseconds from 1 ms to 3650 days (the library's limits for both). */
function wholeMilliseconds(parameter: "unique_for" | "expire_in"): RawBuilder<unknown> {
  const value = sql.raw(`enqueue.${parameter}`);
  return sql`  IF ${value} IS NOT NULL THEN
    job_window_ms := extract(epoch FROM ${value}) * 1000;
    IF job_window_ms NOT BETWEEN 1 AND ${sql.lit(LONGEST_MS)} OR job_window_ms <> trunc(job_window_ms) THEN
      RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = ${sql.lit(parameter)}, MESSAGE = format(
        ${sql.lit(`${parameter} must be whole milliseconds from 1 millisecond to 3650 days, got %s`)}, ${value});
    END IF;
  END IF;
`;
}

/** The argument types of `enqueue(…)` before version 22. */
const OLD_SIGNATURE = "text, jsonb, timestamptz, interval, integer, integer, interval, text, text, jsonb, integer";

/** The argument types of `enqueue(…)` from version 22 to 23. */
export const WINDOWS_SIGNATURE = `${OLD_SIGNATURE}, text, interval, timestamptz, interval`;

/** The argument types of `enqueue(…)` since version 24. */
export const ENQUEUE_SIGNATURE = `${WINDOWS_SIGNATURE}, text, text, text`;

/**
 * The statements that replace `enqueue(…)` by a function with more
 * parameters (version 22: `from` the signature before it, `to` its own;
 * version 24 passes its pair). A function with other parameters is a new
 * function, so one block drops the old one and creates the new one, and
 * gives the new one the old one's `EXECUTE` grants (an application role
 * granted only the function keeps it); then the comment.
 *
 * @example
 * ```ts
 * const statements = enqueueWindowsFunctionStatements("stint", create);
 * ```
 */
export function enqueueWindowsFunctionStatements(
  schema: string,
  create: RawBuilder<unknown>,
  signatures: { readonly from: string; readonly to: string } = { from: OLD_SIGNATURE, to: WINDOWS_SIGNATURE },
): readonly RawBuilder<unknown>[] {
  const oldFunction = sql.raw(`"${schema}".enqueue(${signatures.from})`);
  const newFunction = `"${schema}".enqueue(${signatures.to})`;
  return [
    sql`DO $migration$
DECLARE
  old_acl aclitem[];
  granted record;
BEGIN
  SELECT p.proacl INTO old_acl FROM pg_catalog.pg_proc AS p WHERE p.oid = ${sql.lit(`"${schema}".enqueue(${signatures.from})`)}::regprocedure;
  DROP FUNCTION ${oldFunction};
  EXECUTE $create$${create}$create$;
  -- A NULL acl is the default (EXECUTE for PUBLIC and the owner), which the new function has too.
  IF old_acl IS NOT NULL THEN
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', ${sql.lit(newFunction)});
    FOR granted IN SELECT a.grantee, a.is_grantable FROM aclexplode(old_acl) AS a WHERE a.privilege_type = 'EXECUTE' LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s%s', ${sql.lit(newFunction)},
        CASE WHEN granted.grantee = 0 THEN 'PUBLIC' ELSE granted.grantee::regrole::text END,
        CASE WHEN granted.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
  END IF;
END
$migration$`,
    sql`COMMENT ON FUNCTION ${sql.raw(newFunction)} IS
'Enqueues a job as the stint library does and returns its id (or the id of the active job holding its dedupe key, or of the first job of its open unique window). See docs/enqueue-from-sql.md.'`,
  ];
}
