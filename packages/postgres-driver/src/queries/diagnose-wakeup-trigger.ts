import { sql, type Kysely } from "kysely";

/**
 * The state of the `jobs_notify_inserted` trigger: `"enabled"`,
 * `"disabled"` (`ALTER TABLE … DISABLE TRIGGER`) or `"missing"`.
 *
 * ### SQL
 * ```sql
 * SELECT tgenabled FROM pg_trigger
 *  WHERE tgrelid = to_regclass(format('%I.jobs', $1::text)) AND tgname = 'jobs_notify_inserted'
 * ```
 *
 * @example
 * ```ts
 * if ((await readWakeupTrigger(db, "stint")) !== "enabled") console.warn("workers will only poll");
 * ```
 */
export async function readWakeupTrigger(executor: Kysely<any>, schema: string): Promise<"enabled" | "disabled" | "missing"> {
  const { rows } = await sql<{ enabled: string }>`SELECT tgenabled AS enabled FROM pg_trigger
 WHERE tgrelid = to_regclass(format('%I.jobs', ${schema}::text)) AND tgname = 'jobs_notify_inserted'`.execute(executor);
  const row = rows[0];
  if (row === undefined) return "missing";
  return row.enabled === "D" ? "disabled" : "enabled";
}
