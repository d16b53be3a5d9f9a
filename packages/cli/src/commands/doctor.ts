import { ExitCode } from "@stint/core";
import { diagnose, resolveConnectionVariables } from "@stint/postgres-driver";
import type { Command } from "../command";

/**
 * `stint doctor`: runs the driver's health checks (the connection — direct,
 * session pooler or transaction pooler —, schema version, stuck leases,
 * table bloat, the history's size and partitions, long transactions …) and
 * prints ✓ or ✗ for each.
 * Exits 1 when a check of severity `error` fails; failed warnings are shown
 * but do not change the exit code.
 */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the schema and the database for problems (exit 1 on an error)",
  usage: ["doctor [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {},
  notes: [
    "Checks: connection (a direct connection, a session pooler, or a transaction pooler such as PgBouncer in",
    "pool_mode=transaction, and what stint does there), schema, migrations, indexes, wakeup-trigger, stuck-leases,",
    "jobs-bloat, history (the size of finished_jobs, its day partitions and the oldest one, the rows of",
    "finished_jobs_kept), history-partitions (warns when fewer than 2 days of partitions are ready ahead),",
    "legacy-history (finished jobs still in jobs: run `stint migrate`), oldest-transaction, idle-in-transaction.",
    "Behind a transaction pooler, the two settings that matter are STINT_PREPARED_STATEMENTS (auto, on, off) and",
    "STINT_SESSION_DATABASE_URL (a direct connection for LISTEN wake-ups and the leader lock); the connection check",
    "tests the second one too when it is set.",
    "Exit codes: 0 no error (warnings are shown), 1 a check of severity error failed, 69 unreachable, 78 configuration.",
  ],
  async run(context) {
    const connection = await context.connect({ checkSchema: false });
    const { sessionConnectionString } = resolveConnectionVariables(context.io.env, {});
    const target = {
      connectionString: connection.target.url,
      ...(sessionConnectionString.value === undefined ? {} : { sessionConnectionString: sessionConnectionString.value }),
    };
    const { checks } = await diagnose(connection.db, context.schema, { connection: target });
    const failed = checks.filter((check) => !check.ok);
    const errors = failed.filter((check) => check.severity === "error").length;
    const ok = errors === 0;
    if (context.json) {
      context.out.json({ schema: context.schema, ok, checks });
      return ok ? ExitCode.Ok : ExitCode.Failure;
    }
    const width = Math.max(0, ...checks.map((check) => check.name.length));
    for (const check of checks) {
      const mark = check.ok ? "✓" : "✗";
      const severity = check.ok || check.severity === "error" ? "" : ` [${check.severity}]`;
      context.out.line(`${mark} ${check.name.padEnd(width)}  ${check.detail}${severity}`);
    }
    if (failed.length === 0) {
      context.out.line(`\nAll ${checks.length} checks passed.`);
    } else {
      const warnings = failed.length - errors;
      const parts = [errors === 0 ? "" : `${errors} error${errors === 1 ? "" : "s"}`, warnings === 0 ? "" : `${warnings} warning${warnings === 1 ? "" : "s"}`];
      context.out.line(`\n${failed.length} of ${checks.length} checks failed: ${parts.filter((part) => part !== "").join(", ")}.`);
    }
    return ok ? ExitCode.Ok : ExitCode.Failure;
  },
};
