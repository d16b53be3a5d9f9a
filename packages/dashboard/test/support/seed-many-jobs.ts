import { sql, type Kysely } from "kysely";

/** What {@link seedManyJobs} wrote. */
export interface ManyJobs {
  readonly finished: number;
  readonly waiting: number;
  /** The ids of the 3 dead jobs of the queue `rare`, oldest first. */
  readonly rareIds: readonly string[];
}

/** Spacing of the finished jobs' creation times: 1,000,000 jobs span 100 hours, 200,000 span 20. */
const SPACING_MS = 360;

/**
 * Writes `finished` finished jobs in one `INSERT … SELECT … generate_series`
 * (rows as workers leave them: 20 queues, created `SPACING_MS` apart up to
 * now, one in 97 dead with a timeout, one in 201 cancelled), 3 dead jobs of
 * the queue `rare` with the error text `meltdown`, a few seconds apart in
 * the oldest third, and `waiting` queued jobs; then `VACUUM ANALYZE`s both
 * tables, as a real schema's statistics would be.
 *
 * @example
 * ```ts
 * const { rareIds } = await seedManyJobs(test.db, test.schema, { finished: 1_000_000, waiting: 10_000 });
 * ```
 */
export async function seedManyJobs(db: Kysely<any>, schema: string, counts: { readonly finished: number; readonly waiting: number }): Promise<ManyJobs> {
  const { finished, waiting } = counts;
  const firstRare = Math.floor(finished / 6);
  const rare = [firstRare, firstRare + 11, firstRare + 23];
  const hours = Math.ceil((finished * SPACING_MS) / 3_600_000);
  await sql`SELECT ${sql.id(schema, "ensure_history_partitions")}(((now() - ${hours}::integer * interval '1 hour') AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 1)`.execute(
    db,
  );
  await sql`INSERT INTO ${sql.id(schema, "finished_jobs")} (id, queue, payload, state, attempts, created_at, run_at, updated_at, finished_at, last_error)
SELECT g, CASE WHEN g = ANY(${rare}::integer[]) THEN 'rare' ELSE 'queue-' || (g % 20) END, '{"n":1}'::jsonb,
       CASE WHEN g = ANY(${rare}::integer[]) OR g % 97 = 0 THEN 'dead' WHEN g % 201 = 0 THEN 'cancelled' ELSE 'succeeded' END,
       1, t - interval '50 milliseconds', t - interval '50 milliseconds', t, t,
       CASE WHEN g = ANY(${rare}::integer[]) THEN 'Error: rare gateway meltdown'
            WHEN g % 97 = 0 THEN 'Error: timeout after 30 s'
            WHEN g % 20 = 0 THEN 'Error: connection reset, retried' END
  FROM generate_series(1, ${finished}::integer) AS g,
       LATERAL (SELECT now() - (${finished}::integer - g) * ${SPACING_MS}::integer * interval '1 millisecond' AS t) AS at`.execute(db);
  await sql`INSERT INTO ${sql.id(schema, "jobs")} (id, queue, payload, state, created_at, run_at, updated_at)
SELECT ${finished}::integer + g, 'queue-' || (g % 4), '{"n":1}'::jsonb, 'queued', now() - (${waiting}::integer - g) * interval '1 millisecond', now(), now()
  FROM generate_series(1, ${waiting}::integer) AS g`.execute(db);
  await sql`SELECT setval(${`${schema}.jobs_id_seq`}::regclass, ${finished + waiting + 1}::bigint)`.execute(db);
  await sql`VACUUM ANALYZE ${sql.id(schema, "finished_jobs")}`.execute(db);
  await sql`VACUUM ANALYZE ${sql.id(schema, "jobs")}`.execute(db);
  return { finished, waiting, rareIds: rare.map(String) };
}
