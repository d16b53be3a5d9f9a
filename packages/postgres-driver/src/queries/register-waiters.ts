import type pg from "pg";

/** Runs one statement on a session connection (the listening one) and returns its rows. */
export type SessionQuery = <R extends pg.QueryResultRow>(text: string, values: readonly unknown[]) => Promise<readonly R[]>;

/**
 * Registers `waiter` as waiting for jobs `ids` (rows of `job_waiters`,
 * migration 8), then, in a second statement run after the first has
 * committed, returns those of the jobs whose row a transaction is
 * changing right now (`xmax` set). A statement that finishes a job
 * announces it only to waiters registered before its `notify_awaited`
 * ran; one that already holds the row may have run it before this
 * registration: for the ids returned, the caller reads again once that
 * transaction has ended. For the others, any finish to come is announced,
 * and one already committed is seen by the caller's next read of the job
 * (in `finished_jobs`, where the finish moved it).
 *
 * Only `jobs` is looked at: a finish deletes the job's row there and
 * inserts it into `finished_jobs` in one statement, so a finish in flight
 * shows as the `xmax` of the `jobs` row, as an update in place did; once
 * it committed, the row is gone from `jobs` and the job is finished.
 *
 * ### SQL
 * ```sql
 * INSERT INTO "stint"."job_waiters" (job_id, waiter)
 * SELECT id, $2 FROM unnest($1::bigint[]) AS id ON CONFLICT DO NOTHING;
 * -- then, committed:
 * SELECT id::text AS id FROM "stint"."jobs" WHERE id = ANY($1::bigint[]) AND xmax::text <> '0';
 * ```
 *
 * @example
 * ```ts
 * const { busy } = await registerWaiters(query, "stint", { waiter, ids: ["812"] });
 * ```
 */
export async function registerWaiters(
  query: SessionQuery,
  schema: string,
  params: { readonly waiter: string; readonly ids: readonly string[] },
): Promise<{ readonly busy: readonly string[] }> {
  await query(
    `INSERT INTO ${quoted(schema)}."job_waiters" (job_id, waiter)
SELECT id, $2 FROM unnest($1::bigint[]) AS id ON CONFLICT DO NOTHING`,
    [params.ids, params.waiter],
  );
  return { busy: await findBusyJobs(query, schema, params.ids) };
}

/**
 * The jobs among `ids` whose row in `jobs` a transaction is changing,
 * deleting (a finish moving it to `finished_jobs`) or has locked (`xmax`
 * set on the version this statement sees): a finish may be about to
 * commit. See {@link registerWaiters}.
 *
 * @example
 * ```ts
 * const busy = await findBusyJobs(query, "stint", ["812"]);
 * ```
 */
export async function findBusyJobs(query: SessionQuery, schema: string, ids: readonly string[]): Promise<readonly string[]> {
  const rows = await query<{ id: string }>(
    `SELECT id::text AS id FROM ${quoted(schema)}."jobs"
 WHERE id = ANY($1::bigint[]) AND xmax::text <> '0'`,
    [ids],
  );
  return rows.map((row) => row.id);
}

/**
 * Removes `waiter`'s rows for jobs `ids`, or all of its rows when `ids`
 * is left out (at close).
 *
 * ### SQL
 * ```sql
 * DELETE FROM "stint"."job_waiters" WHERE waiter = $1 [AND job_id = ANY($2::bigint[])];
 * ```
 *
 * @example
 * ```ts
 * await removeWaiters(query, "stint", { waiter, ids: ["812"] });
 * ```
 */
export async function removeWaiters(query: SessionQuery, schema: string, params: { readonly waiter: string; readonly ids?: readonly string[] }): Promise<void> {
  const table = `${quoted(schema)}."job_waiters"`;
  if (params.ids === undefined) await query(`DELETE FROM ${table} WHERE waiter = $1`, [params.waiter]);
  else await query(`DELETE FROM ${table} WHERE waiter = $1 AND job_id = ANY($2::bigint[])`, [params.waiter, params.ids]);
}

/** A validated schema name (see `assertSqlIdentifier`: lower-case letters, digits and _) as a quoted identifier. */
function quoted(schema: string): string {
  return `"${schema.replace(/"/g, '""')}"`;
}
