import type { OptionSpec } from "../command";

/** One option as `util.parseArgs` takes it. */
export interface ParseArgsOption {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
}

/**
 * The `util.parseArgs` configuration of a command's options: an option
 * marked `multiple` keeps every value it is given, in order (a string
 * array), where any other keeps the last.
 *
 * @example
 * ```ts
 * parseArgs({ args, options: toParseArgsConfig({ queue: { type: "string", multiple: true, description: "…" } }), strict: true });
 * ```
 */
export function toParseArgsConfig(options: Readonly<Record<string, OptionSpec>>): Record<string, ParseArgsOption> {
  const config: Record<string, ParseArgsOption> = {};
  for (const [name, spec] of Object.entries(options)) {
    config[name] = {
      type: spec.type,
      ...(spec.short === undefined ? {} : { short: spec.short }),
      ...(spec.multiple === true ? { multiple: true } : {}),
    };
  }
  return config;
}
