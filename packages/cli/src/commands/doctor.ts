import { ExitCode } from "@stint/core";
import { diagnose } from "@stint/postgres-driver";
import type { Command } from "../command";

/**
 * `stint doctor`: runs the driver's health checks (schema version, stuck
 * leases, table bloat, long transactions …) and prints ✓ or ✗ for each.
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
  async run(context) {
    const connection = await context.connect({ checkSchema: false });
    const { checks } = await diagnose(connection.db, context.schema);
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
