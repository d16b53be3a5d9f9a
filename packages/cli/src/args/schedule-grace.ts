import { resolveRunSettings, SCHEDULE_GRACE_SETTING } from "@stint/core/internal";
import { stringOption, type CommandContext, type OptionSpec } from "../command";

/** `--schedule-grace`, as `stint run` and `stint schedules list` take it. */
export const SCHEDULE_GRACE_OPTION: OptionSpec = Object.freeze({
  type: "string",
  value: "DURATION",
  description: `how long a schedule the code stopped declaring keeps firing, 1m to 365d (${SCHEDULE_GRACE_SETTING.variable}; default 1d)`,
});

/**
 * The schedule grace a command works with: `--schedule-grace`, else
 * `STINT_SCHEDULE_GRACE`, else a day. An invalid value is a configuration
 * error (exit 78) naming the flag or the variable.
 *
 * @example
 * ```ts
 * const graceMs = scheduleGraceOf(context); // 86_400_000 unless told otherwise
 * ```
 */
export function scheduleGraceOf(context: CommandContext): number {
  const flag = stringOption(context, "schedule-grace");
  return resolveRunSettings({ queues: [], flags: flag === undefined ? {} : { scheduleGraceMs: flag }, env: context.io.env }).scheduleGraceMs.value;
}
