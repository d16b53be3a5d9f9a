import type { Command, OptionSpec } from "./command";

/** Options every command takes. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  "database-url": { type: "string", value: "URL", description: "PostgreSQL URL (default: $DATABASE_URL)" },
  schema: { type: "string", value: "NAME", description: 'schema of stint\'s tables (default: $STINT_SCHEMA or "stint")' },
  "connect-timeout": { type: "string", value: "DURATION", description: "how long to wait for PostgreSQL to answer (default: 5s)" },
  help: { type: "boolean", short: "h", description: "show help" },
  version: { type: "boolean", short: "V", description: "print the version of stint" },
});

/** `--json`, which every command takes: its result as one JSON document on stdout, a failure as one on stderr. */
export const JSON_OPTION: OptionSpec = Object.freeze({
  type: "boolean",
  description: 'print one JSON document instead of text (a failure as {"error":{"code","message"}} on stderr)',
});

/** `--json` of a command whose output is JSON anyway (`run`): only failures change. */
const JSON_ERRORS_OPTION: OptionSpec = Object.freeze({
  type: "boolean",
  description: "print a failure as one JSON document on stderr (the output is JSON anyway)",
});

const EXIT_CODES = "Exit codes: 0 ok, 1 failure, 2 usage error, 3 not found, 4 wrong state, 69 database unreachable, 78 configuration error, 130 interrupted.";
const LOG_VARIABLES = "Logs (of `run`) go to stderr: STINT_LOG_LEVEL (error, warn, info, debug), STINT_LOG_FORMAT (json, pretty).";

/** The overview printed by `stint --help`. */
export function overallHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    "Usage: stint <command> [arguments] [options]",
    "",
    "Operate stint: background jobs in PostgreSQL.",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Global options:",
    ...optionLines({ ...GLOBAL_OPTIONS, json: JSON_OPTION }),
    "",
    "Run `stint <command> --help` for a command's arguments and options.",
    EXIT_CODES,
    LOG_VARIABLES,
  ].join("\n");
}

/** The help of one command, printed by `stint <command> --help`. */
export function commandHelp(command: Command): string {
  const options = { ...command.options, json: command.json ? JSON_OPTION : JSON_ERRORS_OPTION };
  return [
    ...command.usage.map((line, index) => `${index === 0 ? "Usage:" : "      "} stint ${line}`),
    "",
    `${command.summary}.`,
    ...(command.notes === undefined ? [] : ["", ...command.notes]),
    "",
    "Options:",
    ...optionLines(options),
    "",
    "Global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    EXIT_CODES,
  ].join("\n");
}

/** The short usage printed after a usage error. */
export function shortUsage(command: Command | undefined): string {
  if (command === undefined) return "Usage: stint <command> [arguments] [options]\nRun `stint --help` for the list of commands.";
  return [
    ...command.usage.map((line, index) => `${index === 0 ? "Usage:" : "      "} stint ${line}`),
    `Run \`stint ${command.name} --help\` for details.`,
  ].join("\n");
}

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  const entries = Object.entries(options).map(([name, spec]) => {
    const flag = `${spec.short === undefined ? "" : `-${spec.short}, `}--${name}${spec.value === undefined ? "" : ` ${spec.value}`}`;
    return [flag, spec.description] as const;
  });
  const width = Math.max(...entries.map(([flag]) => flag.length));
  return entries.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`);
}
