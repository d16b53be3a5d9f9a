import { createServer, type Server } from "node:http";
import type { Logger } from "@stint/core";
import { createDashboard, type DashboardHandler } from "@stint/dashboard";
import type { Kysely } from "kysely";
import { AiSummary } from "../jobs/ai-summary";
import { NightlyCleanup } from "../jobs/nightly-cleanup";
import { SendInvoiceEmail } from "../jobs/send-invoice-email";
import { SendReportEmail } from "../jobs/send-report-email";
import { WeeklyReport } from "../jobs/weekly-report";

/** What the admin server needs: the app's pool and logger, and the token operators sign in with. */
export interface AdminDashboardOptions {
  readonly db: Kysely<any>;
  readonly schema: string;
  readonly log: Logger;
  readonly token: string;
}

/**
 * The example app's dashboard under `/admin/jobs`, on the app's own pool,
 * knowing every job kind (so payloads show with their secret fields
 * redacted), with actions logged through the app's logger.
 *
 * @example
 * ```ts
 * const dashboard = adminDashboard({ db: container.resolve(POSTGRES_DB), schema: "stint", log, token: process.env.DASHBOARD_TOKEN! });
 * ```
 */
export function adminDashboard(options: AdminDashboardOptions): DashboardHandler {
  return createDashboard({
    db: options.db,
    schema: options.schema,
    basePath: "/admin/jobs",
    auth: { token: options.token },
    jobKinds: [SendInvoiceEmail, SendReportEmail, WeeklyReport, NightlyCleanup, AiSummary],
    log: options.log,
  });
}

/**
 * An HTTP server for the app's other routes with the dashboard mounted:
 * the dashboard answers under its base path and hands every other request
 * to `next`.
 *
 * @example
 * ```ts
 * serveWithDashboard(adminDashboard(options)).listen(8080, "127.0.0.1");
 * ```
 */
export function serveWithDashboard(dashboard: DashboardHandler): Server {
  return createServer((request, response) => {
    dashboard(request, response, () => {
      response.writeHead(404, { "Content-Type": "text/plain" });
      response.end("Not found\n");
    });
  });
}
