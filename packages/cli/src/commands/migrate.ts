import { DEFAULT_ROLES, migrate, migrationSql, MIGRATIONS, rolesSql } from "@stint/postgres-driver";
import { ExitCode } from "@stint/core";
import { loadMigrateApp } from "../app/load-app";
import { usageError } from "../cli-error";
import { flagOption, stringOption, type Command } from "../command";

/**
 * `stint migrate`: creates the schema or brings it up to date (safe to run
 * from several processes at once); `--print-sql` prints the script instead,
 * and `--print-roles-sql` the least-privilege roles script, both without
 * connecting.
 */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "Create stint's tables or bring them up to date",
  usage: [
    "migrate [--schema NAME] [--app MODULE]",
    "migrate --print-sql [--schema NAME]",
    "migrate --print-roles-sql [--schema NAME] [--migrator-role NAME] [--runtime-role NAME]",
  ],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    "print-sql": { type: "boolean", description: "print the migration script for psql instead of running it (no connection)" },
    app: { type: "string", value: "MODULE", description: "also run the app module's migrate(env) for its own tables (default: $STINT_APP)" },
    "print-roles-sql": {
      type: "boolean",
      description: "print SQL creating a migration role (owns the schema) and a runtime role (rows only, no DDL), for a superuser to run (no connection)",
    },
    "migrator-role": { type: "string", value: "NAME", description: `with --print-roles-sql: the migration role (default ${DEFAULT_ROLES.migrator})` },
    "runtime-role": { type: "string", value: "NAME", description: `with --print-roles-sql: the runtime role (default ${DEFAULT_ROLES.runtime})` },
  },
  notes: [
    "Idempotent: a schema that is up to date is left alone. Concurrent runs wait for each other.",
    "With --app, an app module that exports migrate({ connectionString, schema }) migrates its own tables afterwards.",
    'Least privilege: stint migrate --print-roles-sql | psql "$ADMIN_URL", set the roles\' passwords, then migrate as the migrator and run workers as the runtime role.',
  ],
  async run(context) {
    const migrator = stringOption(context, "migrator-role");
    const runtime = stringOption(context, "runtime-role");
    if (flagOption(context, "print-roles-sql")) {
      context.io.stdout.write(rolesSql(context.schema, { migrator: migrator ?? DEFAULT_ROLES.migrator, runtime: runtime ?? DEFAULT_ROLES.runtime }));
      return ExitCode.Ok;
    }
    if (migrator !== undefined || runtime !== undefined) throw usageError("--migrator-role and --runtime-role go with --print-roles-sql");
    if (flagOption(context, "print-sql")) {
      context.io.stdout.write(migrationSql(context.schema));
      return ExitCode.Ok;
    }
    const { db, target } = await context.connect({ checkSchema: false });
    const result = await migrate(db, { schema: context.schema });
    const app = stringOption(context, "app") ?? (context.io.env["STINT_APP"] || undefined);
    const migrateApp = app === undefined ? undefined : await loadMigrateApp(app, context.cwd);
    await migrateApp?.({ connectionString: target.url, schema: context.schema });
    if (migrateApp !== undefined && !context.json) context.out.line(`Migrated the tables of ${app}.`);
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
