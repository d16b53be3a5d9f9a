import { usageError } from "../cli-error";
import type { CommandContext, OptionValue } from "../command";

/**
 * Reads a list option that may be given more than once and takes a comma
 * list each time (`--queue a --queue b,c`): every name, trimmed, in the
 * order given and each once, or `undefined` when the option is absent. An
 * empty name (`--queue ""`, `--queue a,`) is a usage error (exit 2) naming
 * the option.
 *
 * @example
 * ```ts
 * listOption(context, "queue"); // ["a", "b", "c"] for --queue a --queue b,c
 * ```
 */
export function listOption(context: CommandContext, name: string): string[] | undefined {
  return listValues(`--${name}`, context.values[name]);
}

/** {@link listOption} on the value `util.parseArgs` gave: one string, or an array of them for an option marked `multiple`. */
export function listValues(option: string, given: OptionValue): string[] | undefined {
  const texts = (Array.isArray(given) ? given : [given]).filter((text): text is string => typeof text === "string");
  if (texts.length === 0) return undefined;
  const names: string[] = [];
  for (const text of texts) {
    for (const part of text.split(",")) {
      const trimmed = part.trim();
      if (trimmed === "") throw usageError(`${option} got an empty name in ${JSON.stringify(text)}`);
      if (!names.includes(trimmed)) names.push(trimmed);
    }
  }
  return names;
}
