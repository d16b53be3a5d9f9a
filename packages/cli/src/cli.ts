import { parseArgs } from "node:util";
import { ExitCode } from "@stint/core";
import { assertSqlIdentifier } from "@stint/core/driver";
import { DEFAULT_SCHEMA } from "@stint/postgres-driver";
import { durationOption } from "./args/duration";
import { toParseArgsConfig } from "./args/parse-args-config";
import { configError, usageError } from "./cli-error";
import type { Command, CommandContext, OptionSpec } from "./command";
import { cancelCommand } from "./commands/cancel";
import { dashboardCommand } from "./commands/dashboard";
import { doctorCommand } from "./commands/doctor";
import { enqueueCommand } from "./commands/enqueue";
import { initCommand } from "./commands/init";
import { jobsListCommand } from "./commands/jobs-list";
import { jobsShowCommand } from "./commands/jobs-show";
import { jobsWaitCommand } from "./commands/jobs-wait";
import { jobsWatchCommand } from "./commands/jobs-watch";
import { migrateCommand } from "./commands/migrate";
import { pruneCommand } from "./commands/prune";
import { retryCommand } from "./commands/retry";
import { runCommand } from "./commands/run";
import { schedulesAddCommand } from "./commands/schedules-add";
import { schedulesListCommand } from "./commands/schedules-list";
import { schedulesRemoveCommand } from "./commands/schedules-remove";
import { statusCommand } from "./commands/status";
import { metricsCommand } from "./commands/metrics";
import { limitCommand } from "./commands/limit";
import { groupsCommand } from "./commands/groups";
import { linesReleaseCommand } from "./commands/lines-release";
import { workflowsCancelCommand } from "./commands/workflows-cancel";
import { workflowsListCommand } from "./commands/workflows-list";
import { workflowsShowCommand } from "./commands/workflows-show";
import { retentionCommand } from "./commands/retention";
import { pauseCommand, resumeCommand } from "./commands/pause-resume";
import { checkSchema, openConnection, type Connection } from "./connection/open-connection";
import { resolveDatabaseTarget, type DatabaseTarget } from "./connection/database-url";
import { explainFailure } from "./explain-failure";
import { commandHelp, GLOBAL_OPTIONS, JSON_OPTION, overallHelp } from "./help";
import { Output, type CliIo } from "./io";
import { jsonRequested, reportFailure } from "./report-failure";
import { cliVersion } from "./version";

/** Every command, in the order `stint --help` lists them. */
export const COMMANDS: readonly Command[] = Object.freeze([
  initCommand,
  migrateCommand,
  enqueueCommand,
  statusCommand,
  metricsCommand,
  jobsListCommand,
  jobsShowCommand,
  jobsWaitCommand,
  jobsWatchCommand,
  retryCommand,
  cancelCommand,
  pauseCommand,
  resumeCommand,
  limitCommand,
  groupsCommand,
  linesReleaseCommand,
  workflowsListCommand,
  workflowsShowCommand,
  workflowsCancelCommand,
  retentionCommand,
  pruneCommand,
  schedulesListCommand,
  schedulesAddCommand,
  schedulesRemoveCommand,
  doctorCommand,
  dashboardCommand,
  runCommand,
]);

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/**
 * Runs one `stint` command line and resolves to its exit code (see
 * `ExitCode`); never rejects. Output goes to `io.stdout` (data) and
 * `io.stderr` (errors, progress, notes, logs). With `--json` anywhere on
 * the command line, a failure is one JSON document on stderr,
 * `{"error":{"code","message"}}`, with the same exit code. `--version`
 * (`-V`) prints the version. The binary calls it with the process's
 * streams; tests call it in-process.
 *
 * @example
 * ```ts
 * const code = await runCli(["status", "--json"], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: Command | undefined;
  const json = jsonRequested(argv);
  try {
    const found = findCommand(argv);
    if (found.version) {
      io.stdout.write(json ? `${JSON.stringify({ version: cliVersion() })}\n` : `${cliVersion()}\n`);
      return ExitCode.Ok;
    }
    if (found.group !== undefined) {
      io.stdout.write(`${groupHelp(found.group)}\n`);
      return ExitCode.Ok;
    }
    command = found.command;
    if (command === undefined) return showOverview(io, found.help);
    return await execute(command, found.rest, io, json);
  } catch (thrown) {
    const failure = explainFailure(thrown, { schema: "" });
    reportFailure(io, failure, command, json);
    return failure.exitCode;
  }
}

function showOverview(io: CliIo, help: boolean): number {
  if (help) {
    io.stdout.write(`${overallHelp(COMMANDS)}\n`);
    return ExitCode.Ok;
  }
  io.stderr.write(`${overallHelp(COMMANDS)}\n`);
  return ExitCode.Usage;
}

async function execute(command: Command, rest: readonly string[], io: CliIo, json: boolean): Promise<number> {
  const options: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...command.options, json: JSON_OPTION };
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...rest], options: toParseArgsConfig(options), allowPositionals: true, strict: true });
  } catch (thrown) {
    throw usageError(parseErrorMessage(thrown));
  }
  const { values, positionals } = parsed;
  if (values["help"] === true) {
    io.stdout.write(`${commandHelp(command)}\n`);
    return ExitCode.Ok;
  }
  if (positionals.length < command.args.min) throw usageError(`${command.name}: missing argument`);
  if (positionals.length > command.args.max) {
    throw usageError(`${command.name}: unexpected argument ${JSON.stringify(positionals[command.args.max])}`);
  }
  const schemaText = (values["schema"] as string | undefined) ?? nonEmpty(io.env["STINT_SCHEMA"]) ?? DEFAULT_SCHEMA;
  let schema: string;
  try {
    schema = assertSqlIdentifier(schemaText, "schema");
  } catch (thrown) {
    throw configError(`invalid schema name ${JSON.stringify(schemaText)}: ${(thrown as Error).message.replace(/^schema /, "")}`);
  }
  const connectTimeout = values["connect-timeout"];
  const connectTimeoutMs =
    typeof connectTimeout === "string" ? durationOption("--connect-timeout", connectTimeout, { min: 100, max: 600_000 }) : DEFAULT_CONNECT_TIMEOUT_MS;

  let target: DatabaseTarget | undefined;
  let connection: Promise<Connection> | undefined;
  const context: CommandContext = {
    io,
    out: new Output(io),
    values,
    positionals,
    json: values["json"] === true,
    schema,
    signal: io.signal ?? new AbortController().signal,
    cwd: io.cwd ?? process.cwd(),
    databaseTarget: () => (target ??= resolveDatabaseTarget(values["database-url"] as string | undefined, io.env)),
    connect: (options) => {
      connection ??= openConnection(context.databaseTarget(), {
        schema,
        connectTimeoutMs,
        env: io.env,
        onWarning: (warning) => context.out.note(`stint: warning: ${warning.message}`),
      });
      return options?.checkSchema === false ? connection : connection.then((open) => checkSchema(open, context.out));
    },
  };
  try {
    return await command.run(context);
  } catch (thrown) {
    const failure = explainFailure(thrown, { schema, ...(target === undefined ? {} : { address: target.address, url: target }) });
    reportFailure(io, failure, command, json);
    return failure.exitCode;
  } finally {
    if (connection !== undefined) await connection.then((open) => open.close()).catch(() => undefined);
  }
}

interface FoundCommand {
  readonly command: Command | undefined;
  /** The arguments without the command's words. */
  readonly rest: readonly string[];
  /** `--help`, `-h` or `help` without a command. */
  readonly help: boolean;
  /** A group whose commands to list (`stint jobs --help`). */
  readonly group?: string;
  /** `--version` or `-V`: print the version, whatever else is given. */
  readonly version?: boolean;
}

const GROUPS = new Set(COMMANDS.filter((command) => command.name.includes(" ")).map((command) => command.name.split(" ")[0]!));

/**
 * Finds the command words (`status`, `jobs list`) among the arguments,
 * which may come after global options. Every option any command takes is
 * known here, so `--limit 50` is read as an option and its value.
 */
function findCommand(argv: readonly string[]): FoundCommand {
  const { tokens } = parseArgs({
    args: [...argv],
    options: toParseArgsConfig(allOptions()),
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const words = tokens.filter((token) => token.kind === "positional");
  const help = tokens.some((token) => token.kind === "option" && token.name === "help");
  if (tokens.some((token) => token.kind === "option" && token.name === "version")) return { command: undefined, rest: argv, help, version: true };
  const first = words[0];
  if (first === undefined) return { command: undefined, rest: argv, help };
  if (first.value === "help") {
    const topic = words
      .slice(1)
      .map((word) => word.value)
      .join(" ");
    const named = COMMANDS.find((command) => command.name === topic);
    if (topic !== "" && named === undefined && !GROUPS.has(topic)) throw usageError(`unknown command "${topic}"`);
    if (named === undefined && GROUPS.has(topic)) return { command: undefined, rest: [], help: true, group: topic };
    return { command: named, rest: named === undefined ? [] : ["--help"], help: true };
  }
  let length = 1;
  let name = first.value;
  if (GROUPS.has(first.value)) {
    const second = words[1];
    if (second === undefined) {
      if (help) return { command: undefined, rest: [], help, group: first.value };
      throw usageError(`${first.value}: missing subcommand (${subcommands(first.value)})`);
    }
    name = `${first.value} ${second.value}`;
    length = 2;
    if (!COMMANDS.some((command) => command.name === name)) {
      throw usageError(`${first.value}: unknown subcommand "${second.value}" (${subcommands(first.value)})`);
    }
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) throw usageError(`unknown command "${first.value}"`);
  const wordIndexes = new Set(words.slice(0, length).map((word) => word.index));
  return { command, rest: argv.filter((_arg, index) => !wordIndexes.has(index)), help };
}

function groupHelp(group: string): string {
  const members = COMMANDS.filter((command) => command.name.startsWith(`${group} `));
  const width = Math.max(...members.map((command) => command.name.length));
  return [
    `Usage: stint ${group} <subcommand> [arguments] [options]`,
    "",
    "Subcommands:",
    ...members.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    `Run \`stint ${group} <subcommand> --help\` for details.`,
  ].join("\n");
}

function subcommands(group: string): string {
  return COMMANDS.filter((command) => command.name.startsWith(`${group} `))
    .map((command) => `stint ${command.name}`)
    .join(", ");
}

function allOptions(): Record<string, OptionSpec> {
  const all: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, json: JSON_OPTION };
  for (const command of COMMANDS) Object.assign(all, command.options);
  return all;
}

function parseErrorMessage(thrown: unknown): string {
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  // parseArgs explains how to pass a value starting with "-"; keep its first sentence.
  return message.split(". To specify")[0]!.replace(/^Unknown option '([^']+)'$/, "unknown option $1");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
