import { assertQueueName, readLogSettings, resolveWorkers, runFromContainer, type RunFromContainerOptions } from "@stint/core";
import { durationOption } from "../args/duration";
import { integerValue } from "../args/option-values";
import { configError } from "../cli-error";
import { flagOption, stringOption, type Command, type CommandContext } from "../command";
import { assertStintApp, loadCreateApp, type StintApp } from "../app/load-app";
import { startRunProgress, type RunProgress } from "../output/run-progress";

/**
 * `stint run`: loads the application's composition root and runs the
 * workers of the given queues through core's `runFromContainer`, once (a
 * Kubernetes CronJob) or in a loop (a Deployment). The first SIGINT/SIGTERM
 * stops claiming and lets in-flight jobs finish until the shutdown timeout;
 * a second one exits at once with 130. Prints one JSON summary line on
 * stdout (with or without `--json`); the workers' logs go to stderr, and
 * with `--once` on a terminal a progress line is drawn there too.
 * `STINT_LOG_LEVEL` and `STINT_LOG_FORMAT` are checked before anything starts.
 */
export const runCommand: Command = {
  name: "run",
  summary: "Run the workers of some queues from your application (once or in a loop)",
  usage: [
    "run <queue…> --app <module> [--once] [--max-runtime 4m] [--max-jobs N] [--shutdown-timeout 25s] [--health-port 8080]",
  ],
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  json: false,
  options: {
    app: { type: "string", value: "MODULE", description: "module exporting createApp(env) (default: $STINT_APP); a path or a package" },
    once: { type: "boolean", description: "process the due jobs, then exit (the CronJob mode); default: run until stopped" },
    "max-runtime": { type: "string", value: "DURATION", description: "stop claiming after this long, e.g. 4m" },
    "max-jobs": { type: "string", value: "N", description: "stop after claiming N jobs" },
    "shutdown-timeout": { type: "string", value: "DURATION", description: "on SIGTERM, how long in-flight jobs may finish (e.g. 25s)" },
    "health-port": { type: "string", value: "PORT", description: "serve /healthz and /readyz on this port" },
  },
  notes: [
    "The app module exports createApp({ connectionString, schema }) returning { container, close() }:",
    "the container has the store, the logger and the worker classes registered (see the README).",
    "",
    "Prints one JSON line with the run's summary on stdout when it ends; the exit code is the run's.",
    "Logs go to stderr (STINT_LOG_LEVEL: error, warn, info, debug; STINT_LOG_FORMAT: json, pretty);",
    "with --once on a terminal, a progress line there shows jobs done, failed, remaining and the rate.",
    "",
    "Examples:",
    "  stint run send-invoice-email --once --max-runtime 4m --app ./dist/stint-app.js",
    "  STINT_APP=@acme/jobs stint run send-invoice-email weekly-report --health-port 8080",
  ],
  async run(context) {
    const queues = [...new Set(context.positionals.map((queue) => assertQueueName(queue)))];
    const options = readRunOptions(context);
    readLogSettings(context.io.env);
    const specifier = stringOption(context, "app") ?? nonEmpty(context.io.env["STINT_APP"]);
    if (specifier === undefined) {
      throw configError("no app module: pass --app <module> or set STINT_APP (a module exporting createApp, see `stint run --help`)");
    }
    const target = context.databaseTarget();
    // Fail fast, with the CLI's messages, when the database is unreachable or the schema is not migrated.
    const connection = await context.connect();
    const showProgress = options.mode === "once" && context.io.stderr.isTTY === true;
    // The connection stays open only to count for the progress line.
    if (!showProgress) await connection.close();
    const createApp = await loadCreateApp(specifier, context.cwd);
    const app = assertStintApp(await createApp({ connectionString: target.url, schema: context.schema }), specifier);
    let progress: RunProgress | undefined;
    try {
      assertQueuesKnown(app, queues, specifier);
      if (showProgress) progress = await startRunProgress({ queues, store: connection.store, stream: context.io.stderr });
      const report = await runFromContainer(app.container, { ...options, queues, signal: context.signal });
      await progress?.stop();
      context.out.line(JSON.stringify(report));
      return report.exitCode;
    } finally {
      await progress?.stop();
      await app.close();
    }
  },
};

function readRunOptions(context: CommandContext): Omit<RunFromContainerOptions, "queues" | "signal"> {
  const maxRuntime = stringOption(context, "max-runtime");
  const maxJobs = stringOption(context, "max-jobs");
  const shutdownTimeout = stringOption(context, "shutdown-timeout");
  const healthPort = stringOption(context, "health-port");
  return {
    mode: flagOption(context, "once") ? "once" : "loop",
    ...(maxRuntime === undefined ? {} : { maxRuntimeMs: durationOption("--max-runtime", maxRuntime, { min: 1 }) }),
    ...(maxJobs === undefined ? {} : { maxJobs: integerValue("--max-jobs", maxJobs, 1, 1_000_000_000) }),
    ...(shutdownTimeout === undefined ? {} : { shutdownTimeoutMs: durationOption("--shutdown-timeout", shutdownTimeout, { max: 2_147_483_647 }) }),
    ...(healthPort === undefined ? {} : { healthPort: integerValue("--health-port", healthPort, 0, 65_535) }),
  };
}

function assertQueuesKnown(app: StintApp, queues: readonly string[], specifier: string): void {
  const known = resolveWorkers(app.container).map((worker) => worker.queue);
  const unknown = queues.filter((queue) => !known.includes(queue));
  if (unknown.length > 0) {
    const which = unknown.map((queue) => `"${queue}"`).join(", ");
    throw configError(`${specifier} has no worker for ${which} (known queues: ${[...known].sort().join(", ")})`);
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
