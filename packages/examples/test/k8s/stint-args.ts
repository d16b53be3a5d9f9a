/** A `stint` command line as a container's `args` spell it (the image's entrypoint is the CLI). */
export interface StintArgs {
  /** `run`, `migrate`, … */
  readonly command: string;
  /** The positional arguments after the command: the queues of `run`. */
  readonly positionals: readonly string[];
  /** `--name value`, `--name=value`, or `true` for a switch. */
  readonly options: ReadonlyMap<string, string | true>;
}

/** Options that take no value. */
const SWITCHES = new Set(["--once", "--print-sql"]);

/**
 * Splits container args into command, positionals and options.
 *
 * @example
 * ```ts
 * parseStintArgs(["run", "ai-summary", "--once", "--max-runtime", "4m"]);
 * // { command: "run", positionals: ["ai-summary"], options: Map { "--once" => true, "--max-runtime" => "4m" } }
 * ```
 */
export function parseStintArgs(args: readonly string[]): StintArgs {
  const [command, ...rest] = args;
  if (command === undefined) throw new Error("no stint command in args");
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i]!;
    if (!arg.startsWith("--")) {
      if (options.size > 0) throw new Error(`positional argument ${JSON.stringify(arg)} after the options`);
      positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf("=");
    const name = equals === -1 ? arg : arg.slice(0, equals);
    if (options.has(name)) throw new Error(`option ${name} given twice`);
    if (equals !== -1) {
      options.set(name, arg.slice(equals + 1));
    } else if (SWITCHES.has(name)) {
      options.set(name, true);
    } else {
      const value = rest[i + 1];
      if (value === undefined || value.startsWith("--")) throw new Error(`option ${name} needs a value`);
      options.set(name, value);
      i += 1;
    }
  }
  return { command, positionals, options };
}

/** The value of a valued option, or undefined; throws when it is a switch. */
export function optionValue(args: StintArgs, name: string): string | undefined {
  const value = args.options.get(name);
  if (value === true) throw new Error(`option ${name} has no value`);
  return value;
}

/**
 * A duration as the CLI takes it (`500ms`, `35s`, `4m`, `1h30m`, `2d`; each
 * unit at most once, largest first), in seconds.
 *
 * @example
 * ```ts
 * durationSeconds("4m");    // 240
 * durationSeconds("2m10s"); // 130
 * ```
 */
export function durationSeconds(text: string): number {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(text);
  if (text === "0") return 0;
  if (match === null || text === "") throw new Error(`not a duration: ${JSON.stringify(text)}`);
  const [days, hours, minutes, secs, ms] = match.slice(1).map((part) => Number(part ?? 0));
  return days! * 86_400 + hours! * 3_600 + minutes! * 60 + secs! + ms! / 1000;
}
