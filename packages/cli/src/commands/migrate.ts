import { migrate, migrationSql, MIGRATIONS } from "@stint/postgres-driver";
import { ExitCode } from "@stint/core";
import { flagOption, type Command } from "../command";

/**
 * `stint migrate`: creates the schema or brings it up to date (safe to run
 * from several processes at once); `--print-sql` prints the script instead,
 * without connecting.
 */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "Create stint's tables or bring them up to date",
  usage: ["migrate [--schema NAME]", "migrate --print-sql [--schema NAME]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    "print-sql": { type: "boolean", description: "print the migration script for psql instead of running it (no connection)" },
  },
  notes: ["Idempotent: a schema that is up to date is left alone. Concurrent runs wait for each other."],
  async run(context) {
    if (flagOption(context, "print-sql")) {
      context.io.stdout.write(migrationSql(context.schema));
      return ExitCode.Ok;
    }
    const { db } = await context.connect({ checkSchema: false });
    const result = await migrate(db, { schema: context.schema });
    if (context.json) {
      context.out.json({ schema: result.schema, applied: result.applied, version: result.version });
      return ExitCode.Ok;
    }
    if (result.applied.length === 0) {
      context.out.line(`Schema "${result.schema}" is up to date (version ${result.version}).`);
      return ExitCode.Ok;
    }
    const names = result.applied.map((version) => `${version} ${MIGRATIONS.find((m) => m.version === version)?.name ?? ""}`.trim());
    context.out.line(`Migrated schema "${result.schema}" to version ${result.version}; applied: ${names.join(", ")}.`);
    return ExitCode.Ok;
  },
};
