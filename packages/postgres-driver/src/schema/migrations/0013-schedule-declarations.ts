import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 13: schedules follow the code.
 *
 * - `schedules.origin` — `code` for a schedule the application declares
 *   (`syncSchedules`), `runtime` for one created at run time
 *   (`upsertSchedule`); a name belongs to one of them.
 * - `schedules.declared_at` — when a process last declared the schedule
 *   (for `runtime`: when it was last created or changed). The ticker fires
 *   a `code` schedule only while `declared_at` is within the grace, so a
 *   schedule deleted from the code stops once no process declares it.
 *
 * Existing rows become `code` schedules declared at the time of the
 * migration: they keep firing through the grace, and for good once the
 * processes that declare them run this version.
 */
export const scheduleDeclarationsMigration: Migration = Object.freeze({
  version: 13,
  name: "schedule-declarations",
  statements: (schema: string) => [
    sql`ALTER TABLE ${sql.id(schema, "schedules")}
  ADD COLUMN origin text NOT NULL DEFAULT 'code' CONSTRAINT schedules_origin_check CHECK (origin IN ('code', 'runtime')),
  ADD COLUMN declared_at timestamptz NOT NULL DEFAULT now()`,
  ],
});
