import { sql, type RawBuilder } from "kysely";

/**
 * `enter_job_group()`, the trigger that gives a waiting grouped job's group
 * a row in `job_groups` (version 23). It runs for a row of `jobs` inserted
 * with a group key (enqueued, or a finished job retried). A job that goes
 * back to wait from `running` needs no trigger: a claim removes a group
 * only when nothing of it waits or runs.
 *
 * The group's row is locked `FOR KEY SHARE` until the job's transaction
 * ends: a claim removes an empty group only after locking its row `FOR
 * UPDATE SKIP LOCKED` (see `claimGroupTurnsFunction`), which such a lock
 * refuses, and then looks for waiting jobs with a fresh snapshot. So a
 * group is never removed while a job of it waits, whatever the timing, and
 * enqueues of one group never wait for each other (key-share locks do not
 * conflict). When the row is missing the trigger inserts it, and when
 * another transaction inserted it first, locks it on the next turn.
 *
 * The first group of a queue also sets `queues.grouped` and adds the
 * queue's turn for jobs without a group (`group_key = ''`, never removed).
 * A key is either a group or a serial line, never both at once. A line's
 * dead job that comes back (retried) releases the line it held.
 */
export function enterJobGroupFunction(schema: string): RawBuilder<unknown> {
  const groups = sql.id(schema, "job_groups");
  const queues = sql.id(schema, "queues");
  return sql`CREATE FUNCTION ${sql.id(schema, "enter_job_group")}() RETURNS trigger
LANGUAGE plpgsql AS $function$
DECLARE
  line boolean;
  holder bigint;
BEGIN
  LOOP
    SELECT g.serial, g.held_by INTO line, holder FROM ${groups} AS g
     WHERE g.queue = NEW.queue AND g.group_key = NEW.group_key
       FOR KEY SHARE;
    EXIT WHEN FOUND;
    INSERT INTO ${groups} AS g (queue, group_key, serial) VALUES (NEW.queue, NEW.group_key, NEW.serial IS NOT NULL)
      ON CONFLICT DO NOTHING
      RETURNING g.serial, g.held_by INTO line, holder;
    IF FOUND THEN
      IF NOT EXISTS (SELECT FROM ${queues} AS q WHERE q.name = NEW.queue AND q.grouped) THEN
        INSERT INTO ${queues} AS q (name, grouped) VALUES (NEW.queue, true)
          ON CONFLICT (name) DO UPDATE SET grouped = true, updated_at = now() WHERE NOT q.grouped;
        INSERT INTO ${groups} (queue, group_key) VALUES (NEW.queue, '') ON CONFLICT DO NOTHING;
      END IF;
      EXIT;
    END IF;
  END LOOP;
  IF line <> (NEW.serial IS NOT NULL) THEN
    RAISE EXCEPTION 'key % of queue % is %; a job cannot use it as %', quote_literal(NEW.group_key), quote_literal(NEW.queue),
      CASE WHEN line THEN 'a serial key' ELSE 'a group' END, CASE WHEN line THEN 'a group' ELSE 'a serial key' END
      USING ERRCODE = '22023';
  END IF;
  IF holder = NEW.id THEN
    UPDATE ${groups} AS g SET held_by = NULL WHERE g.queue = NEW.queue AND g.group_key = NEW.group_key AND g.held_by = NEW.id;
  END IF;
  RETURN NULL;
END
$function$`;
}

/**
 * `claim_group_turns(queue, wanted, after, cap)`: the groups a claim of a
 * grouped queue takes jobs from, and how many from each (version 23).
 *
 * 1. It looks at up to `2 × wanted + 4` groups of the queue in key order,
 *    starting after `after` (the last group the claimer's previous claim
 *    passed) and wrapping round: each claimer goes round every group, so
 *    none waits more than one round of it. Nothing is written to take a
 *    turn: the rotation lives in the claimer. Groups under a cap (`cap`, the
 *    queue's `max_running_per_group`) and serial lines are locked (`FOR NO
 *    KEY UPDATE SKIP LOCKED`) until the claim commits, and passed over when
 *    another claim holds them, so two claims never serve one at once: that
 *    is what makes the per-group cap and a line's one-at-a-time exact.
 * 2. With a fresh snapshot (a new statement, after the locks), it counts
 *    each group's due jobs, up to one more than an even share, and, where a
 *    cap or a line needs it, its running ones: a claim that committed a
 *    moment ago is counted.
 * 3. It serves the first `wanted` of them that can take something (due
 *    jobs, room under the cap; a serial line when nothing of it runs and no
 *    dead job holds it): an even share of `wanted` each, cut to what it has
 *    and to the room its cap leaves; what the others leave over goes to the
 *    groups that have more, in turn order. A serial line gets one job.
 * 4. Groups without due jobs (not the queue's own `''` turn, nor a held
 *    line) are removed when nothing of them waits or runs, each only once
 *    locked `FOR UPDATE SKIP LOCKED` and seen so by one more fresh snapshot
 *    (see `enterJobGroupFunction`).
 *
 * With at least `2 × wanted + 4` groups, no cap and no serial line among
 * them, it skips 2 to 4 on most claims (one in twenty still takes them, and so
 * removes empty groups): each group it looked at may give one job (a
 * fiftieth of a claim of over 100), and the claim statement, which stops at
 * its room, passes over those with nothing due.
 *
 * Returns the groups it passed, in turn order, up to the last it serves,
 * with `take` 0 for those that get nothing.
 */
export function claimGroupTurnsFunction(schema: string): RawBuilder<unknown> {
  const groups = sql.id(schema, "job_groups");
  const jobs = sql.id(schema, "jobs");
  return sql`CREATE FUNCTION ${sql.id(schema, "claim_group_turns")}(queue_name text, wanted integer, after text, cap integer)
  RETURNS TABLE (turn_key text, turn_serial boolean, take integer)
LANGUAGE plpgsql AS $function$
DECLARE
  fair integer;
  keys text[];
  serials boolean[];
  helds bigint[];
  more_keys text[];
  more_serials boolean[];
  locked text[];
  locked_helds bigint[];
  rooms integer[];
  bases integer[];
  empty text[];
  slack integer;
  saturated integer;
  extra integer;
  give integer;
  served integer;
  last integer;
  reach integer := wanted * 2 + 4;
  i integer;
BEGIN
  IF wanted IS NULL OR wanted <= 0 THEN
    RETURN;
  END IF;
  SELECT array_agg(t.group_key ORDER BY t.group_key), array_agg(t.serial ORDER BY t.group_key)
    INTO keys, serials
    FROM (SELECT g.group_key, g.serial FROM ${groups} AS g
           WHERE g.queue = queue_name AND (after IS NULL OR g.group_key > after)
           ORDER BY g.group_key
           LIMIT reach) AS t;
  IF coalesce(cardinality(keys), 0) < reach AND after IS NOT NULL THEN
    -- Round again from the first group, up to where this turn began.
    SELECT array_agg(t.group_key ORDER BY t.group_key), array_agg(t.serial ORDER BY t.group_key)
      INTO more_keys, more_serials
      FROM (SELECT g.group_key, g.serial FROM ${groups} AS g
             WHERE g.queue = queue_name AND g.group_key <= after
             ORDER BY g.group_key
             LIMIT reach - coalesce(cardinality(keys), 0)) AS t;
    keys := coalesce(keys, '{}') || coalesce(more_keys, '{}');
    serials := coalesce(serials, '{}') || coalesce(more_serials, '{}');
  END IF;
  IF coalesce(cardinality(keys), 0) = 0 THEN
    RETURN;
  END IF;
  IF cap IS NOT NULL OR true = ANY(serials) THEN
    -- A capped group and a serial line are served by one claim at a time: each is locked until this claim commits, and
    -- one another claim holds is passed over. A line's hold is read from its locked row, as the last death left it.
    SELECT array_agg(g.group_key), array_agg(g.held_by) INTO locked, locked_helds
      FROM (SELECT l.group_key, l.held_by FROM ${groups} AS l
             WHERE l.queue = queue_name AND l.group_key = ANY(keys) AND l.group_key <> '' AND (cap IS NOT NULL OR l.serial)
               FOR NO KEY UPDATE SKIP LOCKED) AS g;
    SELECT array_agg(t.key ORDER BY t.n), array_agg(t.serial ORDER BY t.n), array_agg(h.held ORDER BY t.n)
      INTO keys, serials, helds
      FROM unnest(keys, serials) WITH ORDINALITY AS t(key, serial, n)
      LEFT JOIN unnest(locked, locked_helds) AS h(key, held) ON h.key = t.key
     WHERE t.key = '' OR NOT (cap IS NOT NULL OR t.serial) OR h.key IS NOT NULL;
    IF coalesce(cardinality(keys), 0) = 0 THEN
      RETURN;
    END IF;
  ELSE
    helds := array_fill(NULL::bigint, ARRAY[cardinality(keys)]);
  END IF;
  IF cap IS NULL AND NOT (true = ANY(serials)) AND cardinality(keys) = reach AND random() >= 0.05 THEN
    -- Twice as many groups as the claim wants jobs, no cap and no line: one job from each in turn (a fiftieth of a big
    -- claim, so that it reads some fifty groups' ranges rather than hundreds). The claim statement passes over a group with
    -- nothing due and stops at its room, so nothing is counted here; one claim in twenty takes the path below instead,
    -- which counts, and removes the groups left with nothing waiting.
    RETURN QUERY SELECT t.key, t.serial, greatest(1, wanted / 50) FROM unnest(keys, serials) AS t(key, serial);
    RETURN;
  END IF;
  -- rooms: how many each turn could take now: its due jobs within its cap (counted up to one more than an even share
  -- among as many groups as the claim wants: more than that counts as "as many as its cap allows"); a line, its head or
  -- nothing.
  fair := ceil(wanted::numeric / least(wanted, cardinality(keys)))::integer;
  SELECT array_agg(CASE WHEN t.serial THEN CASE WHEN t.held IS NULL AND running.n = 0 AND due.n > 0 THEN 1 ELSE 0 END
                        WHEN due.n > fair THEN CASE WHEN t.key = '' OR cap IS NULL THEN wanted ELSE greatest(cap - running.n, 0) END
                        WHEN t.key = '' OR cap IS NULL THEN due.n
                        ELSE least(due.n, greatest(cap - running.n, 0)) END ORDER BY t.n),
         array_agg(t.key) FILTER (WHERE due.n = 0 AND t.key <> '' AND t.held IS NULL)
    INTO rooms, empty
    FROM unnest(keys, serials, helds) WITH ORDINALITY AS t(key, serial, held, n)
    CROSS JOIN LATERAL (
      SELECT count(*)::integer AS n FROM (
        SELECT FROM ${jobs} AS j
         WHERE j.queue = queue_name AND j.group_key = t.key AND j.state IN ('queued', 'failed') AND (t.serial OR j.run_at <= now())
         LIMIT CASE WHEN t.serial THEN 1 ELSE fair + 1 END) AS d) AS due
    CROSS JOIN LATERAL (
      SELECT count(*)::integer AS n FROM (
        SELECT FROM ${jobs} AS j
         WHERE t.key <> '' AND (t.serial OR cap IS NOT NULL)
           AND j.queue = queue_name AND j.group_key = t.key AND j.group_key <> '' AND j.state = 'running'
         LIMIT coalesce(cap, 1)) AS r) AS running;
  IF empty IS NOT NULL THEN
    SELECT array_agg(doomed.group_key) INTO empty FROM (
      SELECT g.group_key FROM ${groups} AS g WHERE g.queue = queue_name AND g.group_key = ANY(empty) FOR UPDATE SKIP LOCKED) AS doomed;
    -- A running job keeps its group: should it go back to wait for a retry, its group's row must be there.
    DELETE FROM ${groups} AS g
     WHERE g.queue = queue_name AND g.group_key = ANY(empty) AND g.held_by IS NULL
       AND NOT EXISTS (SELECT FROM ${jobs} AS j WHERE j.queue = queue_name AND j.group_key = g.group_key AND j.state IN ('queued', 'failed'))
       AND NOT EXISTS (SELECT FROM ${jobs} AS j WHERE j.queue = queue_name AND j.group_key = g.group_key AND j.state = 'running');
  END IF;
  -- This claim serves the first "wanted" turns that can take something; the turns it passes on the way, with nothing
  -- due or at their cap, get their turn too (nothing), and the ones after the last it serves wait for the next claim.
  served := 0;
  last := cardinality(keys);
  FOR i IN 1 .. cardinality(keys) LOOP
    IF rooms[i] > 0 THEN
      served := served + 1;
      IF served = wanted THEN
        last := i;
        EXIT;
      END IF;
    END IF;
  END LOOP;
  IF served = 0 THEN
    RETURN QUERY SELECT t.key, t.serial, 0 FROM unnest(keys, serials) AS t(key, serial);
    RETURN;
  END IF;
  -- An even share each, then what is left over to the turns that have more, in turn order.
  fair := ceil(wanted::numeric / served)::integer;
  bases := array_fill(0, ARRAY[last]);
  slack := wanted;
  saturated := 0;
  FOR i IN 1 .. last LOOP
    bases[i] := least(rooms[i], fair, slack);
    slack := slack - bases[i];
    IF rooms[i] > bases[i] THEN
      saturated := saturated + 1;
    END IF;
  END LOOP;
  IF slack > 0 AND saturated > 0 THEN
    extra := ceil(slack::numeric / saturated)::integer;
    FOR i IN 1 .. last LOOP
      EXIT WHEN slack = 0;
      IF rooms[i] > bases[i] THEN
        give := least(extra, rooms[i] - bases[i], slack);
        bases[i] := bases[i] + give;
        slack := slack - give;
      END IF;
    END LOOP;
  END IF;
  RETURN QUERY
  SELECT t.key, t.serial, t.take
    FROM unnest(keys[1:last], serials[1:last], bases) AS t(key, serial, take);
END
$function$`;
}
