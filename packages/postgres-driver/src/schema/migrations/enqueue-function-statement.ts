import { sql, type RawBuilder } from "kysely";
import { windowParts } from "./enqueue-function-windows";
import { groupParts } from "./enqueue-function-groups";

const NOTHING = sql``;

/**
 * The `CREATE FUNCTION "<schema>".enqueue(…)` statement: version 16's
 * function, and with `events` version 20's, which also tells job-event
 * listeners of the job it inserts. Both migrations build their statement
 * here so that the function is written once; with `events: false` the text
 * is exactly what version 16 has always run (the schema tests compare
 * a migrated database with the snapshot in `schema.sql`). `windows` adds
 * version 22's parameters, and `groups` version 24's.
 *
 * @example
 * ```ts
 * const statement = enqueueFunctionStatement("stint", { events: true }); // CREATE OR REPLACE FUNCTION "stint".enqueue(…)
 * ```
 */
export function enqueueFunctionStatement(
  schema: string,
  { events, windows = false, groups = false }: { readonly events: boolean; readonly windows?: boolean; readonly groups?: boolean },
): RawBuilder<unknown> {
  const jobs = sql.id(schema, "jobs");
  const enqueue = sql.id(schema, "enqueue");
  const g = groups ? groupParts() : undefined;
  const w = windows ? windowParts(schema, g) : undefined;
  return sql`${sql.raw(events && !windows ? "CREATE OR REPLACE" : "CREATE")} FUNCTION ${enqueue}(
  queue text,
  payload jsonb,
  run_at timestamptz DEFAULT NULL,
  delay interval DEFAULT NULL,
  priority integer DEFAULT 0,
  max_attempts integer DEFAULT 25,
  timeout interval DEFAULT NULL,
  dedupe_key text DEFAULT NULL,
  dedupe text DEFAULT 'keep',
  meta jsonb DEFAULT NULL,
  max_payload_bytes integer DEFAULT 1048576${w?.parameters ?? NOTHING}${g?.parameters ?? NOTHING}
) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $function$
#variable_conflict use_column
DECLARE
  job_priority integer := coalesce(enqueue.priority, 0);
  job_max_attempts integer := coalesce(enqueue.max_attempts, 25);
  job_mode text := coalesce(enqueue.dedupe, 'keep');
  job_meta jsonb := enqueue.meta;
  job_limit integer := coalesce(enqueue.max_payload_bytes, 1048576);
  job_timeout_ms numeric;
  job_run_at timestamptz;
  json_bytes bigint;
  job_id bigint;
${events ? sql`  job_inserted boolean;\n` : NOTHING}${w?.declarations ?? NOTHING}BEGIN
  IF enqueue.queue IS NULL OR enqueue.queue !~ '^[a-z0-9][a-z0-9_.:-]{0,127}$' THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'queue', MESSAGE = format(
      'queue must be 1-128 characters of lower-case letters, digits and _ . : - starting with a letter or digit, got %s',
      ${shown(sql`enqueue.queue`)});
  END IF;
  IF job_priority NOT BETWEEN -32768 AND 32767 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'priority',
      MESSAGE = format('priority must be an integer from -32768 to 32767, got %s', job_priority);
  END IF;
  IF job_max_attempts NOT BETWEEN 1 AND 1000 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'max_attempts',
      MESSAGE = format('max_attempts must be an integer from 1 to 1000, got %s', job_max_attempts);
  END IF;
  IF enqueue.timeout IS NOT NULL THEN
    job_timeout_ms := extract(epoch FROM enqueue.timeout) * 1000;
    IF job_timeout_ms NOT BETWEEN 1 AND 2147483647 OR job_timeout_ms <> trunc(job_timeout_ms) THEN
      RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'timeout', MESSAGE = format(
        'timeout must be whole milliseconds from 1 millisecond to 2147483647 milliseconds (about 24.8 days), or NULL for none, got %s', enqueue.timeout);
    END IF;
  END IF;
  IF enqueue.run_at IS NOT NULL AND NOT isfinite(enqueue.run_at) THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'run_at', MESSAGE = format('run_at must be a finite time, got %s', enqueue.run_at);
  END IF;
  IF enqueue.delay < interval '0' OR enqueue.delay > interval '3650 days' THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'delay', MESSAGE = format('delay must be from 0 to 3650 days, got %s', enqueue.delay);
  END IF;
  IF enqueue.dedupe_key IS NOT NULL AND (enqueue.dedupe_key = '' OR
      -- Counted in UTF-16 code units, as the library counts: a character beyond U+FFFF is two.
      char_length(enqueue.dedupe_key) > 256 AND char_length(enqueue.dedupe_key)
        + char_length(regexp_replace(enqueue.dedupe_key, ${sql.lit(NOT_ASTRAL)}, '', 'g')) > 512) THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'dedupe_key', MESSAGE = format(
      'dedupe_key must be a non-empty text of at most 512 characters (UTF-16 code units), got %s', ${shown(sql`enqueue.dedupe_key`)});
  END IF;
  IF job_mode NOT IN ('keep', 'replace', 'debounce') THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'dedupe',
      MESSAGE = format('dedupe must be one of keep, replace, debounce, got %s', to_json(job_mode));
  END IF;
  IF job_mode <> 'keep' AND enqueue.dedupe_key IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'dedupe', MESSAGE = format('dedupe %s needs a dedupe_key', to_json(job_mode));
  END IF;
  IF job_mode = 'debounce' AND coalesce(enqueue.delay, interval '0') = interval '0' AND enqueue.run_at IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'dedupe',
      MESSAGE = 'dedupe "debounce" needs a delay (or a run_at): the job runs that long after the last enqueue';
  END IF;
${w?.checks ?? NOTHING}${g?.checks ?? NOTHING}  IF job_limit NOT BETWEEN 2 AND 268435455 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'max_payload_bytes',
      MESSAGE = format('max_payload_bytes must be an integer from 2 to 268435455, got %s', job_limit);
  END IF;

  IF enqueue.payload IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'payload',
      MESSAGE = 'payload must be a JSON value, got NULL (pass ''null''::jsonb for a JSON null)';
  END IF;
  IF ${tooDeep(sql`enqueue.payload`)} THEN
    RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'payload',
      MESSAGE = format('payload of queue %s is nested more than 64 levels deep, the limit for payloads', to_json(enqueue.queue));
  END IF;
  json_bytes := octet_length(enqueue.payload::text);
  IF json_bytes > job_limit THEN
    json_bytes := ${compactBytes(sql`enqueue.payload`)};
    IF json_bytes > job_limit THEN
      RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'payload', MESSAGE = format(
        'payload of queue %s is %s bytes of JSON, more than the limit of %s bytes', to_json(enqueue.queue), json_bytes, job_limit);
    END IF;
  END IF;

  IF job_meta IS NOT NULL AND jsonb_typeof(job_meta) <> 'null' THEN
    IF jsonb_typeof(job_meta) <> 'object' THEN
      RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'meta',
        MESSAGE = format('meta must be a JSON object, got %s %s', CASE jsonb_typeof(job_meta) WHEN 'array' THEN 'an' ELSE 'a' END, jsonb_typeof(job_meta));
    END IF;
    IF ${tooDeep(sql`job_meta`)} THEN
      RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'meta', MESSAGE = 'meta is nested more than 64 levels deep, the limit for payloads';
    END IF;
    json_bytes := octet_length(job_meta::text);
    IF json_bytes > 8192 THEN
      json_bytes := ${compactBytes(sql`job_meta`)};
      IF json_bytes > 8192 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', COLUMN = 'meta',
          MESSAGE = format('meta is %s bytes of JSON, more than the limit of 8192 bytes', json_bytes);
      END IF;
    END IF;
  END IF;
  -- As the library stores them: no meta, or an empty one, is NULL.
  IF job_meta IN ('null'::jsonb, '{}'::jsonb) THEN
    job_meta := NULL;
  END IF;

  job_run_at := coalesce(enqueue.run_at, now()) + coalesce(enqueue.delay, interval '0');
${w?.window ?? NOTHING}  IF enqueue.dedupe_key IS NULL THEN
    INSERT INTO ${jobs} (queue, payload, priority, max_attempts, timeout_ms, run_at, meta${w?.column ?? NOTHING}${g?.column ?? NOTHING})
    VALUES (enqueue.queue, enqueue.payload, job_priority, job_max_attempts, job_timeout_ms, job_run_at, job_meta${w?.value ?? NOTHING}${g?.value ?? NOTHING})
    RETURNING id INTO job_id;
${events ? sql`    ${notifyEnqueued(schema, "    ")}\n` : NOTHING}    RETURN job_id;
  END IF;
  -- The key's unique index makes concurrent enqueues of one key take turns. An insert that waited for another
  -- transaction's holder and skipped it finds that holder below, on a snapshot taken after the wait; the loop only
  -- goes round when the holder finished in between (its key is free again).
  FOR turn IN 1..10 LOOP
    IF job_mode = 'keep' THEN
      INSERT INTO ${jobs} AS jobs (queue, payload, priority, max_attempts, timeout_ms, run_at, dedupe_key, meta${w?.column ?? NOTHING}${g?.column ?? NOTHING})
      VALUES (enqueue.queue, enqueue.payload, job_priority, job_max_attempts, job_timeout_ms, job_run_at, enqueue.dedupe_key, job_meta${w?.value ?? NOTHING}${g?.value ?? NOTHING})
      ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running', 'failed') DO NOTHING
      ${events ? sql`RETURNING id, true INTO job_id, job_inserted;` : sql`RETURNING id INTO job_id;`}
    ELSE
${
  w?.release ??
  sql`      -- replace and debounce: a queued holder takes this job's fields; one that is running or retrying is kept.
`
}      INSERT INTO ${jobs} AS jobs (queue, payload, priority, max_attempts, timeout_ms, run_at, dedupe_key, meta${w?.column ?? NOTHING}${g?.column ?? NOTHING}${w?.followsColumn ?? NOTHING})
      VALUES (enqueue.queue, enqueue.payload, job_priority, job_max_attempts, job_timeout_ms, job_run_at, enqueue.dedupe_key, job_meta${w?.value ?? NOTHING}${g?.value ?? NOTHING}${w?.followsValue ?? NOTHING})
      ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running', 'failed')
      DO UPDATE SET payload = excluded.payload, priority = excluded.priority, max_attempts = excluded.max_attempts,
                    timeout_ms = excluded.timeout_ms, run_at = excluded.run_at, meta = excluded.meta, ${w?.replaceStartBy ?? NOTHING}updated_at = now()
         WHERE jobs.state = 'queued'
${events ? sql`      -- xmax is 0 on a row this statement inserted, set on the holder it updated.\n` : NOTHING}      ${events ? sql`RETURNING id, xmax = 0 INTO job_id, job_inserted;` : sql`RETURNING id INTO job_id;`}
    END IF;
    IF job_id IS NOT NULL THEN
${events ? sql`      IF job_inserted THEN\n        ${notifyEnqueued(schema, "        ")}\n      END IF;\n` : NOTHING}      RETURN job_id;
    END IF;
${w?.replaceAgain ?? NOTHING}    SELECT held.id INTO job_id FROM ${jobs} AS held
     WHERE held.queue = enqueue.queue AND held.dedupe_key = enqueue.dedupe_key AND held.state IN ('queued', 'running', 'failed');
    IF job_id IS NOT NULL THEN
      RETURN job_id;
    END IF;
  END LOOP;
  RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = format(
    'enqueue gave up after 10 tries: the dedupe key %s of queue %s kept changing hands', to_json(enqueue.dedupe_key), to_json(enqueue.queue));
END
$function$`;
}

/**
 * The PL/pgSQL that sends an `enqueued` event for `job_id` through
 * `notify_job_events` (version 17) when a listener is live, each line
 * indented by `indent`. Nested, not one AND: SQL does not promise to skip
 * the listeners' lookup when the caller may not read them. The channel is
 * the one `jobEventChannel` names, computed in the function so that the
 * text names no schema twice.
 */
export function notifyEnqueued(schema: string, indent: string): RawBuilder<unknown> {
  const at = sql.raw(`\n${indent}`);
  const listeners = sql.id(schema, "job_event_listeners");
  const notifyFunction = sql.id(schema, "notify_job_events");
  return sql`IF has_table_privilege(format('%I.%I', ${sql.lit(schema)}, 'job_event_listeners'), 'SELECT')${at}   AND has_function_privilege(format('%I.%I(text, text[], bigint[], text[], integer[], jsonb[])', ${sql.lit(schema)}, 'notify_job_events'), 'EXECUTE') THEN${at}  IF EXISTS (SELECT FROM ${listeners} AS l WHERE l.expires_at > now()) THEN${at}    PERFORM ${notifyFunction}(left('stint_events_' || ${sql.lit(schema)}, 63), ARRAY['enqueued'], ARRAY[job_id], ARRAY[enqueue.queue], ARRAY[0], NULL::jsonb[]);${at}  END IF;${at}END IF;`;
}

/** A character class of every character below U+10000: removing them leaves the ones UTF-16 writes as two units. */
export const NOT_ASTRAL = String.raw`[^\U00010000-\U0010FFFF]`;

/** A JSON string in PostgreSQL's text of a `jsonb` value, or a separator (`:` or `,`) with the space PostgreSQL writes after it. */
const STRING_OR_SEPARATOR = String.raw`("(?:[^"\\]|\\.)*")|([,:]) `;

/**
 * The bytes of `value`'s JSON text without the space after each separator:
 * strings are matched whole, so a `, ` inside one is kept. Only run on a
 * value whose text is over a limit, since it costs a regular expression
 * over the whole text.
 */
function compactBytes(value: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`octet_length(regexp_replace(${value}::text, ${sql.lit(STRING_OR_SEPARATOR)}, ${sql.lit(String.raw`\1\2`)}, 'g'))`;
}

/** Whether `value` holds an object or array below 64 levels of them, which the library refuses (`MAX_PAYLOAD_DEPTH`). */
function tooDeep(value: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`jsonb_path_exists(${value}, 'strict $.**{64} ? (@.type() == "array" || @.type() == "object")')`;
}

/** A text for an error message: JSON-quoted, cut at 200 characters with its length, or NULL. */
export function shown(value: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN ${value} IS NULL THEN 'NULL' WHEN char_length(${value}) <= 200 THEN to_json(${value})::text
        ELSE to_json(left(${value}, 200))::text || format('… (%s characters)', char_length(${value})) END`;
}
