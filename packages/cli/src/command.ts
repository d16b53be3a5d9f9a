import type { CliIo, Output } from "./io";
import type { Connection } from "./connection/open-connection";
import type { DatabaseTarget } from "./connection/database-url";

/** An option of a command, as `util.parseArgs` reads it, with its help text. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** Placeholder in help, e.g. `N`, `ISO`, `30s`. */
  readonly value?: string;
  /** A string option that may be given more than once: its value is then every one given, in order (read it with `listOption`). */
  readonly multiple?: boolean;
  readonly description: string;
}

/** The value of one option as `util.parseArgs` read it. */
export type OptionValue = string | boolean | readonly (string | boolean)[] | undefined;

/** What a command's `run` gets. */
export interface CommandContext {
  readonly io: CliIo;
  readonly out: Output;
  /** Option values by long name (strings, or `true` for flags; every value given, in order, for a `multiple` option), as given. */
  readonly values: Readonly<Record<string, OptionValue>>;
  readonly positionals: readonly string[];
  /** `--json` was given: print one JSON document on stdout (failures are printed by the router). */
  readonly json: boolean;
  /** The validated schema name. */
  readonly schema: string;
  /** Aborts on the first SIGINT/SIGTERM; never aborts in-process unless the caller's does. */
  readonly signal: AbortSignal;
  /** Directory relative paths are read from. */
  readonly cwd: string;
  /** The database URL (checked); exit 78 when missing or malformed. */
  databaseTarget(): DatabaseTarget;
  /**
   * Connects (once per invocation; the router closes it). Unless
   * `checkSchema` is false, first checks that the schema is migrated to the
   * version this stint needs (exit 78 with "run `stint migrate`" otherwise).
   */
  connect(options?: { readonly checkSchema?: boolean }): Promise<Connection>;
}

/** One `stint` command: one file in `commands/`. */
export interface Command {
  /** `"status"`, or `"jobs list"` for a command of a group. */
  readonly name: string;
  readonly summary: string;
  /** Usage lines, each after `stint `. */
  readonly usage: readonly string[];
  /** Positional arguments: at least `min`, at most `max`. */
  readonly args: { readonly min: number; readonly max: number };
  readonly options: Readonly<Record<string, OptionSpec>>;
  /**
   * `--json` changes what it prints on stdout (one JSON document instead of
   * text). Every command accepts `--json`, which also makes a failure one
   * JSON document on stderr; false for a command that prints JSON anyway.
   */
  readonly json: boolean;
  /** Lines of extra help (examples, notes). */
  readonly notes?: readonly string[];
  run(context: CommandContext): Promise<number>;
}

/** Reads a string option, or `undefined`. */
export function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === "string" ? value : undefined;
}

/** Reads a boolean flag. */
export function flagOption(context: CommandContext, name: string): boolean {
  return context.values[name] === true;
}
