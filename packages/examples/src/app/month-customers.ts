import { sql } from "kysely";
import type { AppDb } from "./app-tables";

/** The first day of `month` (`YYYY-MM`) and of the month after, as `YYYY-MM-DD`. */
export function monthBounds(month: string): { readonly first: string; readonly next: string } {
  const [year, number] = month.split("-").map(Number) as [number, number];
  const next = new Date(Date.UTC(year, number, 1)).toISOString().slice(0, 10);
  return { first: `${month}-01`, next };
}

/**
 * The customers to invoice for `month` (`YYYY-MM`): every subscription
 * that started before the month ended and had not ended before it began,
 * in e-mail order. `db` may be a transaction.
 *
 * @example
 * ```ts
 * await customersOfMonth(db, "2026-10"); // ["ada@example.com", "grace@example.com"]
 * ```
 */
export async function customersOfMonth(db: AppDb, month: string): Promise<string[]> {
  const { first, next } = monthBounds(month);
  const rows = await db
    .selectFrom("subscriptions")
    .select("customer_email")
    .where("starts_on", "<", sql<Date>`${next}::date`)
    .where((eb) => eb.or([eb("ends_on", "is", null), eb("ends_on", ">=", sql<Date>`${first}::date`)]))
    .orderBy("customer_email")
    .execute();
  return rows.map((row) => row.customer_email);
}

/**
 * The id of the workflow that closed `month` (`YYYY-MM`), from
 * `month_end_closings`, or `undefined` while the month is open. `db` may
 * be a transaction.
 *
 * @example
 * ```ts
 * await monthEndWorkflowOf(db, "2026-10"); // "41"
 * ```
 */
export async function monthEndWorkflowOf(db: AppDb, month: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("month_end_closings")
    .select("workflow_id")
    .where("month", "=", sql<Date>`${monthBounds(month).first}::date`)
    .executeTakeFirst();
  return row?.workflow_id;
}
