import { stringOption, type CommandContext } from "../command";

/**
 * The app module a command was pointed at: `--app MODULE`, else
 * `$STINT_APP` (blank counts as unset), else `undefined`.
 *
 * @example
 * ```ts
 * const app = appModuleOption(context); // "./dist/stint-app.js" from --app or $STINT_APP
 * ```
 */
export function appModuleOption(context: CommandContext): string | undefined {
  return stringOption(context, "app") ?? (context.io.env["STINT_APP"]?.trim() || undefined);
}
