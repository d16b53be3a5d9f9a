import { ExitCode, readLogSettings, resolveWorkers, runFromContainer, type LogLevel, type RunFromContainerOptions, type SettingFlags } from "@stint/core";
import { resolveContainerSettings, resolveRunSettings } from "@stint/core/internal";
import { assertQueueName } from "@stint/core/driver";
import { durationOption } from "../args/duration";
import { SCHEDULE_GRACE_OPTION } from "../args/schedule-grace";
import { integerValue } from "../args/option-values";
import { configError, usageError } from "../cli-error";
import { flagOption, stringOption, type Command, type CommandContext } from "../command";
import { assertStintApp, loadCreateApp, type StintApp } from "../app/load-app";
import { startRunProgress, type RunProgress } from "../output/run-progress";
import { connectionSettingRows, type ConnectionSettingRow } from "../output/connection-settings";
import { formatSettings } from "../output/settings-table";
import { runRetention, type RunRetention } from "../output/run-retention";
import { QUEUE_CONTROLS_NOTE } from "../output/queue-controls-row";

/**
 * `stint run`: loads the application's composition root and runs the
 * workers of the given queues through core's `runFromContainer`, once (a
 * Kubernetes CronJob) or in a loop (a Deployment). The first SIGINT/SIGTERM
 * stops claiming and lets in-flight jobs finish until the shutdown timeout;
 * a second one exits at once with 130. Prints one JSON summary line on
 * stdout (with or without `--json`); the workers' logs go to stderr, and
 * with `--once` on a terminal a progress line is drawn there too.
 * The worker settings (`--concurrency`, `--prefetch`, `--lease`,
 * `--poll-interval`, `--shutdown-timeout`, `--log-level`,
 * `--schedule-grace`) apply to every queue named and beat the `STINT_*`
 * variables; they, the variables and
 * `STINT_LOG_FORMAT` are checked before anything connects.
 * `--print-config` prints what each queue would run with, and where each
 * value came from, without running anything. Without a queue it is a usage
 * error (2) that lists the queues the app has workers for.
 */
export const runCommand: Command = {
  name: "run",
  summary: "Run the workers of some queues from your application (once or in a loop)",
  usage: [
    "run <queue…> --app <module> [--once] [--max-runtime 4m] [--max-jobs N] [--shutdown-timeout 25s] [--health-port 8080]",
    "run <queue…> --app <module> [--concurrency N] [--prefetch N|auto] [--lease 90s] [--poll-interval 2s] [--log-level LEVEL] [--schedule-grace 1d]",
    "run <queue…> --app <module> --print-config [--json]",
  ],
  // No queue is a usage error too, raised by the command once it can list the app's queues.
  args: { min: 0, max: Number.POSITIVE_INFINITY },
  json: false,
  options: {
    app: { type: "string", value: "MODULE", description: "module exporting createApp(env) (default: $STINT_APP); a path or a package" },
    once: { type: "boolean", description: "process the due jobs, then exit (the CronJob mode); default: run until stopped" },
    "max-runtime": { type: "string", value: "DURATION", description: "stop claiming after this long, e.g. 4m" },
    "max-jobs": { type: "string", value: "N", description: "stop after claiming N jobs" },
    "shutdown-timeout": { type: "string", value: "DURATION", description: "on SIGTERM, how long in-flight jobs may finish, e.g. 25s (STINT_SHUTDOWN_TIMEOUT)" },
    "health-port": { type: "string", value: "PORT", description: "serve /healthz and /readyz on this port" },
    concurrency: { type: "string", value: "N", description: "handlers running at once per queue, 1-1000 (STINT_CONCURRENCY)" },
    prefetch: { type: "string", value: "N|auto", description: "jobs claimed ahead of free handlers per queue, 0-10000 or auto (STINT_PREFETCH)" },
    lease: { type: "string", value: "DURATION", description: "how long a claim is owned without a heartbeat, e.g. 90s (STINT_LEASE)" },
    "poll-interval": { type: "string", value: "DURATION", description: "longest idle wait between polls in loop mode, e.g. 2s (STINT_POLL_INTERVAL)" },
    "log-level": { type: "string", value: "LEVEL", description: "error, warn, info or debug (STINT_LOG_LEVEL)" },
    "schedule-grace": SCHEDULE_GRACE_OPTION,
    "print-config": { type: "boolean", description: "print each queue's settings and where each came from, then exit without running" },
  },
  notes: [
    "The app module exports createApp({ connectionString, schema, logLevel }) returning { container, close() }:",
    "the container has the store, the logger and the worker classes registered (see docs/use-in-your-app.md).",
    "",
    "Without a queue, it lists the queues the app has workers for and exits 2 (usage); a queue the app has",
    "no worker for exits 78 with the same list.",
    "",
    "Prints one JSON line with the run's summary on stdout when it ends; the exit code is the run's:",
    "0 drained or a budget reached, 69 the database stayed unreachable, 78 the schema is not migrated",
    "(or another setup problem the summary's error names), 130 interrupted in once mode.",
    "Logs go to stderr (STINT_LOG_LEVEL: error, warn, info, debug; STINT_LOG_FORMAT: json, pretty);",
    "with --once on a terminal, a progress line there shows jobs done, failed, remaining and the rate.",
    "",
    "Each worker setting is taken from, in order: its flag (for every queue named), STINT_<SETTING>_<QUEUE>",
    "(the queue name upper-cased, other characters as _, e.g. STINT_CONCURRENCY_SEND_INVOICE_EMAIL),",
    "STINT_<SETTING>, the worker's constructor, the default. Durations: 500ms, 90s, 2m, 1h30m.",
    "createApp gets the level of --log-level or STINT_LOG_LEVEL as env.logLevel.",
    "Every process declares the app's schedules at start and hourly; a schedule no process has declared for",
    "--schedule-grace (STINT_SCHEDULE_GRACE, default 1d) stops firing: one deleted from the code stops by itself.",
    "--print-config prints a table (one JSON document with --json) and needs no database connection. Its",
    "retention row is the run's global retention (none with --once: run `stint prune` on a CronJob); a queue's own",
    "retention lives in the database: `stint retention` lists every queue's. So do its controls (pause, --max-running,",
    "--max-running-per-group, rate limit): `stint status` and `stint groups <queue>` show them.",
    "",
    "Behind a connection pooler (PgBouncer in pool_mode=transaction, or what a managed PostgreSQL hands out),",
    "DATABASE_URL alone works. Two variables, read by registerPostgresDriver and shown by --print-config, tune it:",
    "STINT_PREPARED_STATEMENTS (auto, on, off; auto sends named statements until the pooler refuses one, then",
    "unnamed ones) and STINT_SESSION_DATABASE_URL (a direct connection for LISTEN wake-ups and the leader lock;",
    "without it, behind a transaction pooler, idle workers poll every --poll-interval). See `stint doctor`.",
    "",
    "Examples:",
    "  stint run send-invoice-email --once --max-runtime 4m --app ./dist/stint-app.js",
    "  STINT_APP=@acme/jobs stint run send-invoice-email weekly-report --health-port 8080",
    "  STINT_CONCURRENCY=8 stint run send-invoice-email --app ./dist/stint-app.js --print-config",
  ],
  async run(context) {
    const queues = [...new Set(context.positionals.map((queue) => assertQueueName(queue)))];
    const options = readRunOptions(context);
    const flags = readSettingFlags(context);
    readLogSettings(context.io.env);
    // Refuse a bad flag or variable before connecting; the workers' own values come later.
    const logLevel = askedLogLevel(queues, flags, context);
    const specifier = stringOption(context, "app") ?? nonEmpty(context.io.env["STINT_APP"]);
    if (specifier === undefined) {
      if (queues.length === 0) throw usageError("run: missing argument <queue…> (with --app <module> or STINT_APP, it lists the app's queues)");
      throw configError("no app module: pass --app <module> or set STINT_APP (a module exporting createApp, see `stint run --help`)");
    }
    if (queues.length === 0) return refuseWithoutQueues(context, specifier, logLevel);
    const printConfig = flagOption(context, "print-config");
    // Fail fast, with the CLI's messages, when the database is unreachable or the schema is not migrated.
    const connection = printConfig ? undefined : await context.connect();
    const showProgress = options.mode === "once" && context.io.stderr.isTTY === true;
    // The connection stays open only to count for the progress line.
    if (!showProgress) await connection?.close();
    const app = await openApp(context, specifier, logLevel);
    let progress: RunProgress | undefined;
    try {
      assertQueuesKnown(app, queues, specifier);
      const runOptions = { ...options, queues, flags, env: context.io.env };
      if (printConfig) {
        const settings = resolveContainerSettings(app.container, runOptions);
        return printSettings(context, settings, connectionSettingRows(app.container, context.io.env), runRetention(options.mode));
      }
      if (showProgress) progress = await startRunProgress({ queues, store: connection!.store, stream: context.io.stderr });
      const report = await runFromContainer(app.container, { ...runOptions, signal: context.signal });
      await progress?.stop();
      context.out.line(JSON.stringify(report));
      return report.exitCode;
    } finally {
      await progress?.stop();
      await app.close();
    }
  },
};

/** The settings flags as typed; checked by the resolver, which names the flag. */
function readSettingFlags(context: CommandContext): SettingFlags {
  const names = {
    concurrency: "concurrency",
    prefetch: "prefetch",
    leaseMs: "lease",
    pollIntervalMs: "poll-interval",
    shutdownTimeoutMs: "shutdown-timeout",
    logLevel: "log-level",
    scheduleGraceMs: "schedule-grace",
  } as const;
  const flags: Record<string, string> = {};
  for (const [setting, flag] of Object.entries(names)) {
    const text = stringOption(context, flag);
    if (text !== undefined) flags[setting] = text;
  }
  return flags;
}

/** The level `--log-level` or `STINT_LOG_LEVEL` asks for (for createApp), after checking every flag and variable. */
function askedLogLevel(queues: readonly string[], flags: SettingFlags, context: CommandContext): LogLevel | undefined {
  const { logLevel } = resolveRunSettings({ queues: queues.map((queue) => ({ queue })), flags, env: context.io.env });
  return logLevel.source.kind === "default" ? undefined : logLevel.value;
}

function printSettings(
  context: CommandContext,
  settings: ReturnType<typeof resolveContainerSettings>,
  database: readonly ConnectionSettingRow[],
  retention: RunRetention,
): number {
  if (context.json) {
    context.out.json({ ...settings, retention, queueControls: QUEUE_CONTROLS_NOTE, database });
  } else {
    for (const warning of settings.warnings) context.out.note(`stint: warning: ${warning}`);
    context.out.line(formatSettings(settings, database, retention));
  }
  return ExitCode.Ok;
}

function readRunOptions(context: CommandContext): Omit<RunFromContainerOptions, "queues" | "signal" | "flags" | "env"> {
  const maxRuntime = stringOption(context, "max-runtime");
  const maxJobs = stringOption(context, "max-jobs");
  const healthPort = stringOption(context, "health-port");
  return {
    mode: flagOption(context, "once") ? "once" : "loop",
    ...(maxRuntime === undefined ? {} : { maxRuntimeMs: durationOption("--max-runtime", maxRuntime, { min: 1 }) }),
    ...(maxJobs === undefined ? {} : { maxJobs: integerValue("--max-jobs", maxJobs, 1, 1_000_000_000) }),
    ...(healthPort === undefined ? {} : { healthPort: integerValue("--health-port", healthPort, 0, 65_535) }),
  };
}

/** Loads the app module and calls its `createApp` (which gets the database URL, the schema and the log level asked for). */
async function openApp(context: CommandContext, specifier: string, logLevel: LogLevel | undefined): Promise<StintApp> {
  const createApp = await loadCreateApp(specifier, context.cwd);
  const environment = { connectionString: context.databaseTarget().url, schema: context.schema, ...(logLevel === undefined ? {} : { logLevel }) };
  return assertStintApp(await createApp(environment), specifier);
}

/** `stint run` without a queue: a usage error that lists the queues the app has workers for, and how to run one. */
async function refuseWithoutQueues(context: CommandContext, specifier: string, logLevel: LogLevel | undefined): Promise<never> {
  const app = await openApp(context, specifier, logLevel);
  try {
    // resolveWorkers refuses an app without workers (78), so there is a first queue to show.
    const known = appQueues(app);
    const appFlag = stringOption(context, "app") === undefined ? "" : ` --app ${specifier}`;
    throw usageError(`no queue named: ${specifier} runs ${known.join(", ")} — e.g. stint run ${known[0]}${appFlag}`);
  } finally {
    await app.close();
  }
}

function assertQueuesKnown(app: StintApp, queues: readonly string[], specifier: string): void {
  const known = appQueues(app);
  const unknown = queues.filter((queue) => !known.includes(queue));
  if (unknown.length > 0) {
    const which = unknown.map((queue) => `"${queue}"`).join(", ");
    throw configError(`${specifier} has no worker for ${which} (known queues: ${known.join(", ")})`);
  }
}

/** The queues the app's container has workers for, sorted. */
function appQueues(app: StintApp): readonly string[] {
  return [...new Set(resolveWorkers(app.container).map((worker) => worker.queue))].sort();
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
