import { LOG_LEVEL_SETTING, resolveRunSettings, TUNABLE_SETTINGS, type ResolvedSetting, type RunSettings } from "@stint/core/internal";
import type { SettingFlags } from "@stint/core";
import type { ExampleQueue } from "./example-queues";
import { optionValue } from "./stint-args";
import type { StintPod } from "./stint-pods";

/** The literal `env` values of a pod's container (`valueFrom` entries, such as the database Secret, left out). */
export function literalEnv(pod: StintPod): Readonly<Record<string, string>> {
  return Object.fromEntries((pod.container.env ?? []).flatMap((variable) => (variable.value === undefined ? [] : [[variable.name, variable.value]])));
}

/** The settings flags of a pod's `stint run` command line, as typed. */
export function settingFlags(pod: StintPod): SettingFlags {
  const flags: Record<string, string> = {};
  for (const [key, spec] of [...Object.entries(TUNABLE_SETTINGS), ["logLevel", LOG_LEVEL_SETTING] as const]) {
    const text = optionValue(pod.args, spec.flag);
    if (text !== undefined) flags[key] = text;
  }
  return flags;
}

/**
 * The settings each queue of a worker pod runs with, resolved by core from
 * the pod's flags, its literal env values and the example workers'
 * constructors, with each job kind's dead-letter queue: what `stint run
 * --print-config` prints in that pod.
 */
export function podSettings(pod: StintPod, queues: readonly ExampleQueue[]): RunSettings {
  const kindOf = (queue: string): ExampleQueue | undefined => queues.find((candidate) => candidate.queue === queue);
  const settings = resolveRunSettings({
    queues: pod.args.positionals.map((queue) => ({ queue, code: kindOf(queue)?.code ?? {} })),
    flags: settingFlags(pod),
    env: literalEnv(pod),
  });
  // The job kind's dead-letter queue rides along, as the run's container settings carry it.
  return { ...settings, queues: settings.queues.map((entry) => ({ ...entry, deadLetterQueue: kindOf(entry.queue)?.deadLetterQueue ?? null })) };
}

/** The text that set a value in the manifest (`65s` of `STINT_SHUTDOWN_TIMEOUT: 65s`), or `undefined` for a code or default value. */
export function settingText(pod: StintPod, setting: ResolvedSetting<unknown>): string | undefined {
  const { source } = setting;
  if (source.kind === "flag") return optionValue(pod.args, source.name);
  if (source.kind === "env") return literalEnv(pod)[source.name];
  return undefined;
}
