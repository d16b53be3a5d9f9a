import { DEFAULT_ROLES, migrate, migrationSql, MIGRATIONS, rolesSql } from "@stint/postgres-driver";
import { ExitCode } from "@stint/core";
import { loadMigrateApp } from "../app/load-app";
import { usageError } from "../cli-error";
import { flagOption, stringOption, type Command } from "../command";
import { startProgress, type Progress } from "../output/progress";
import { formatCount } from "../output/table";

/**
 * `stint migrate`: creates the schema or brings it up to date (safe to run
 * from several processes at once), then moves the finished jobs an older
 * version left in `jobs` to `finished_jobs`, showing its progress on
 * stderr (`--schema-only` leaves them for a later run); `--print-sql`
 * prints the script instead, and `--print-roles-sql` the least-privilege
 * roles script, both without connecting.
 */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "Create stint's tables or bring them up to date",
  usage: [
    "migrate [--schema NAME] [--app MODULE] [--schema-only]",
    "migrate --print-sql [--schema NAME]",
    "migrate --print-roles-sql [--schema NAME] [--migrator-role NAME] [--runtime-role NAME]",
  ],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    "print-sql": { type: "boolean", description: "print the migration script for psql instead of running it (no connection)" },
    "schema-only": {
      type: "boolean",
      description: "apply the schema migrations only, and leave finished jobs written before version 15 in jobs for a later run to move",
    },
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
    "Finished jobs kept from before version 15 move to finished_jobs in batches of 5,000 while workers run; ^C stops between batches, and the next run carries on.",
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
    // Shown only when there are finished jobs to move: the first report comes after the count.
    let progress: Progress | undefined;
    let counted = 0;
    let result;
    try {
      result = await migrate(db, {
        schema: context.schema,
        moveHistory: !flagOption(context, "schema-only"),
        onHistoryProgress: ({ moved, total }) => {
          counted = total;
          progress ??= startProgress(context.io.stderr, { label: "Moving finished jobs to finished_jobs", unit: "jobs", total });
          // The total is a count taken at the start: workers of an older version may finish a few more meanwhile.
          progress.update(moved, Math.max(total, moved));
        },
        signal: context.signal,
      });
    } finally {
      progress?.stop();
    }
    const app = stringOption(context, "app") ?? (context.io.env["STINT_APP"] || undefined);
    // Stopped by a signal: nothing more starts; the next run carries on.
    const migrateApp = app === undefined || result.interrupted ? undefined : await loadMigrateApp(app, context.cwd);
    await migrateApp?.({ connectionString: target.url, schema: context.schema });
    if (migrateApp !== undefined && !context.json) context.out.line(`Migrated the tables of ${app}.`);
    const exitCode = result.interrupted ? ExitCode.Interrupted : ExitCode.Ok;
    if (context.json) {
      const { schema, applied, version, movedFinishedJobs, interrupted } = result;
      context.out.json({ schema, applied, version, movedFinishedJobs, interrupted });
      return exitCode;
    }
    if (result.applied.length === 0) {
      context.out.line(`Schema "${result.schema}" is up to date (version ${result.version}).`);
    } else {
      const names = result.applied.map((version) => `${version} ${MIGRATIONS.find((m) => m.version === version)?.name ?? ""}`.trim());
      context.out.line(`Migrated schema "${result.schema}" to version ${result.version}; applied: ${names.join(", ")}.`);
    }
    const moved = formatCount(result.movedFinishedJobs);
    if (result.interrupted) {
      context.out.line(
        `Interrupted after moving ${moved} of about ${formatCount(counted)} finished jobs to finished_jobs; run stint migrate again to move the rest.`,
      );
    } else if (result.movedFinishedJobs > 0) {
      context.out.line(`Moved ${moved} finished jobs to finished_jobs.`);
    }
    return exitCode;
  },
};
