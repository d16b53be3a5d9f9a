import { WorkflowFailedError, type JobClient } from "@stint/core";
import type { AppDb } from "../app/app-tables";
import { monthEndWorkflowOf } from "../app/month-customers";
import type { MonthEndReportResult } from "../jobs/month-end";

/** Where a month's closing stands, in words a finance page can show. */
export type MonthEndOutcome =
  | { readonly state: "not-closed" }
  | { readonly state: "reported"; readonly report: MonthEndReportResult }
  | { readonly state: "failed" | "cancelled"; readonly failedStep: string | null; readonly message: string };

/**
 * Waits (up to `timeoutMs`) for the month-end workflow of `month`, found
 * by the id its closing recorded, and says how it ended: its report, or
 * the step that failed. A workflow with a dead invoice step ends
 * `failed` even when its report ran with `ignoreFailedDependencies`.
 *
 * @example
 * ```ts
 * const outcome = await awaitMonthEnd(db, client, "2026-10", 60_000);
 * if (outcome.state === "reported") console.log(outcome.report.totals);
 * ```
 */
export async function awaitMonthEnd(db: AppDb, client: JobClient, month: string, timeoutMs: number): Promise<MonthEndOutcome> {
  const workflowId = await monthEndWorkflowOf(db, month);
  if (workflowId === undefined) return { state: "not-closed" };
  try {
    const { report } = await client.waitForWorkflow(workflowId, { timeoutMs });
    return { state: "reported", report: report as MonthEndReportResult };
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    return { state: error.state, failedStep: error.failedStep, message: error.message };
  }
}

/**
 * Stops the month-end of `month`: the steps not yet run are cancelled,
 * and running ones are told to stop. Resolves with how many steps it
 * cancelled (0 for a month not closed, or one whose workflow finished).
 *
 * @example
 * ```ts
 * await cancelMonthEnd(db, client, "2026-10"); // 3
 * ```
 */
export async function cancelMonthEnd(db: AppDb, client: JobClient, month: string): Promise<number> {
  const workflowId = await monthEndWorkflowOf(db, month);
  return workflowId === undefined ? 0 : client.cancelWorkflow(workflowId);
}
