import type { JobState } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";

/** The states of a finished job. */
export type FinishedState = Extract<JobState, "succeeded" | "dead" | "cancelled">;

/**
 * Moves the finished rows of `jobs` that `where` picks (a condition on the
 * row) to `finished_jobs` in one statement, ids and values kept, as the
 * upgrade moves rows a version before 15 left behind. Returns how many
 * moved.
 *
 * @example
 * ```ts
 * await moveFinishedRows(test.db, test.schema, sql`queue = 'mail'`);
 * ```
 */
export async function moveFinishedRows(db: Kysely<any>, schema: string, where: RawBuilder<unknown> = sql`true`): Promise<number> {
  const { rows } = await sql<{ moved: number }>`WITH removed AS (
  DELETE FROM ${sql.id(schema, "jobs")} WHERE state IN ('succeeded', 'dead', 'cancelled') AND (${where}) RETURNING *),
moved AS (INSERT INTO ${sql.id(schema, "finished_jobs")} SELECT * FROM removed)
SELECT count(*)::int AS moved FROM removed`.execute(db);
  return rows[0]!.moved;
}

/**
 * Inserts a finished job straight into `jobs`, as a version before 15
 * left every finished job: state `state`, finished `finishedAgoMs` ago
 * after one attempt by `legacy-worker`, with a result when it succeeded
 * and an error otherwise. Returns its id.
 *
 * @example
 * ```ts
 * const id = await insertLegacyFinishedRow(test.db, test.schema, { queue: "mail", state: "dead" });
 * ```
 */
export async function insertLegacyFinishedRow(
  db: Kysely<any>,
  schema: string,
  row: { readonly queue: string; readonly state: FinishedState; readonly finishedAgoMs?: number; readonly payload?: object },
): Promise<string> {
  const ago = sql`(${row.finishedAgoMs ?? 0}::double precision * interval '1 millisecond')`;
  const succeeded = row.state === "succeeded";
  const { rows } = await sql<{ id: string }>`INSERT INTO ${sql.id(schema, "jobs")}
  (queue, payload, state, attempts, locked_by, created_at, run_at, started_at, finished_at, updated_at, duration_ms, result, last_error, error_code)
VALUES (${row.queue}, ${JSON.stringify(row.payload ?? { legacy: row.state })}::jsonb, ${row.state}, 1, 'legacy-worker',
        now() - ${ago} - interval '2 seconds', now() - ${ago} - interval '2 seconds', now() - ${ago} - interval '1 second', now() - ${ago}, now() - ${ago},
        1000, ${succeeded ? '{"legacy":true}' : null}::jsonb, ${succeeded ? null : `Error: legacy ${row.state} job`}, ${succeeded ? null : "STINT_PERMANENT"})
RETURNING id::text AS id`.execute(db);
  return rows[0]!.id;
}

/**
 * Where the row of job `id` is: `"jobs"`, `"finished_jobs"`, or
 * `undefined` when in neither.
 *
 * @example
 * ```ts
 * expect(await whereIs(test.db, test.schema, id)).to.equal("finished_jobs");
 * ```
 */
export async function whereIs(db: Kysely<any>, schema: string, id: string): Promise<"jobs" | "finished_jobs" | undefined> {
  const { rows } = await sql<{ place: "jobs" | "finished_jobs" }>`SELECT 'jobs' AS place FROM ${sql.id(schema, "jobs")} WHERE id = ${id}::bigint
UNION ALL
SELECT 'finished_jobs' FROM ${sql.id(schema, "finished_jobs")} WHERE id = ${id}::bigint`.execute(db);
  if (rows.length > 1) throw new Error(`job ${id} is in both tables`);
  return rows[0]?.place;
}
