import { EnvironmentError } from "../errors/environment-error";
import type { Environment, LogLevel } from "../logging/log-settings";
import { misspeltVariableWarnings } from "./misspelt-variables";
import { LOG_LEVEL_SETTING, SCHEDULE_GRACE_SETTING, TUNABLE_SETTINGS, type SettingSpec, type TunableSetting, type TunableSettings } from "./setting-specs";
import { presentValue, queueVariable, queueVariableSuffix } from "./settings-variables";

/** Where a resolved value came from, highest precedence first. */
export type SettingSource =
  { readonly kind: "flag"; readonly name: string } | { readonly kind: "env"; readonly name: string } | { readonly kind: "code" } | { readonly kind: "default" };

/** A setting's value and where it came from. */
export interface ResolvedSetting<V> {
  readonly value: V;
  readonly source: SettingSource;
}

/** The values `stint run` flags gave, as typed (`"8"`, `"90s"`, `"auto"`); they apply to every queue of the run. */
export type SettingFlags = { readonly [K in TunableSetting | "logLevel" | "scheduleGraceMs"]?: string };

/** The settings of one queue of the run. */
export interface QueueSettings {
  readonly queue: string;
  readonly settings: { readonly [K in TunableSetting]: ResolvedSetting<TunableSettings[K]> };
  /** The queue's job kind's dead-letter queue (`null` for none), when the settings are a worker's; set in code only. */
  readonly deadLetterQueue?: string | null;
}

/** What {@link resolveRunSettings} decided. */
export interface RunSettings {
  readonly queues: readonly QueueSettings[];
  /** One per process: the logger is shared by every queue. */
  readonly logLevel: ResolvedSetting<LogLevel>;
  /** One per process: how long a schedule the code stopped declaring keeps firing, in ms. */
  readonly scheduleGraceMs: ResolvedSetting<number>;
  /** `STINT_*` variables that look like a misspelt setting; they are not used. */
  readonly warnings: readonly string[];
}

/** The input of {@link resolveRunSettings}. */
export interface RunSettingsInput {
  /** The queues of the run, each with what its code sets (the worker's constructor, the run's options). */
  readonly queues: ReadonlyArray<{ readonly queue: string; readonly code?: Partial<TunableSettings> }>;
  readonly flags?: SettingFlags;
  /** The environment to read `STINT_*` from; a record, never read from `process.env` here. */
  readonly env?: Environment;
  /** The level the process's logger writes at, when it can say. */
  readonly codeLogLevel?: LogLevel;
  /** The schedule grace the code sets (`runFromContainer`'s `scheduleGraceMs`), already checked. */
  readonly codeScheduleGraceMs?: number;
}

/**
 * Resolves each tunable setting of each queue of a run, in the order
 * flag > `STINT_<SETTING>_<QUEUE>` > `STINT_<SETTING>` > the code's value >
 * the built-in default, and records where each value came from; the two
 * settings of the whole process (the log level, `STINT_LOG_LEVEL`, and the
 * schedule grace, `STINT_SCHEDULE_GRACE`) have no per-queue variable. Pure:
 * it reads only the `env` record it is given. A flag or variable whose value
 * is not acceptable throws an {@link EnvironmentError} naming it, with the
 * same ranges as the code options; an empty variable counts as unset.
 * Variables for queues that are not in the run are ignored. Two queues of
 * the run whose names share a variable suffix (`a.b`, `a-b`) make a
 * variable with that suffix an error.
 *
 * @example
 * ```ts
 * const settings = resolveRunSettings({
 *   queues: [{ queue: "send-invoice-email", code: { concurrency: 8 } }],
 *   env: { STINT_CONCURRENCY: "4", STINT_LEASE_SEND_INVOICE_EMAIL: "2m" },
 * });
 * settings.queues[0].settings.concurrency; // { value: 4, source: { kind: "env", name: "STINT_CONCURRENCY" } }
 * settings.queues[0].settings.leaseMs;     // { value: 120000, source: { kind: "env", name: "STINT_LEASE_SEND_INVOICE_EMAIL" } }
 * ```
 */
export function resolveRunSettings(input: RunSettingsInput): RunSettings {
  const env = input.env ?? {};
  const flags = input.flags ?? {};
  refuseSharedSuffixes(
    input.queues.map(({ queue }) => queue),
    env,
  );
  const queues = input.queues.map(({ queue, code = {} }): QueueSettings => {
    const settings = {} as Record<TunableSetting, ResolvedSetting<unknown>>;
    for (const key of Object.keys(TUNABLE_SETTINGS) as TunableSetting[]) {
      const spec = TUNABLE_SETTINGS[key] as SettingSpec<unknown>;
      settings[key] = resolveSetting(spec, flags[key], [queueVariable(spec.variable, queue), spec.variable], env, code[key]);
    }
    return Object.freeze({ queue, settings: Object.freeze(settings) as QueueSettings["settings"] });
  });
  const logLevel = resolveSetting(LOG_LEVEL_SETTING, flags.logLevel, [LOG_LEVEL_SETTING.variable], env, input.codeLogLevel);
  const grace = SCHEDULE_GRACE_SETTING;
  const scheduleGraceMs = resolveSetting(grace, flags.scheduleGraceMs, [grace.variable], env, input.codeScheduleGraceMs);
  return Object.freeze({ queues: Object.freeze(queues), logLevel, scheduleGraceMs, warnings: misspeltVariableWarnings(env) });
}

/**
 * The values of a queue's settings that a flag or a variable set: what a
 * run passes to the worker's `start()` on top of its own options.
 *
 * @example
 * ```ts
 * settingOverrides(settings.queues[0]); // { concurrency: 4, leaseMs: 120000 }
 * ```
 */
export function settingOverrides(queue: QueueSettings): Partial<TunableSettings> {
  const overrides: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(queue.settings)) {
    if (setting.source.kind === "flag" || setting.source.kind === "env") overrides[key] = setting.value;
  }
  return overrides;
}

/**
 * A source as `stint run --print-config` shows it.
 *
 * @example
 * ```ts
 * describeSource({ kind: "env", name: "STINT_CONCURRENCY" }); // "env STINT_CONCURRENCY"
 * describeSource({ kind: "default" });                         // "default"
 * ```
 */
export function describeSource(source: SettingSource): string {
  return source.kind === "flag" || source.kind === "env" ? `${source.kind} ${source.name}` : source.kind;
}

function resolveSetting<V>(
  spec: SettingSpec<V>,
  flag: string | undefined,
  variables: readonly string[],
  env: Environment,
  code: V | undefined,
): ResolvedSetting<V> {
  if (flag !== undefined) return { value: parsed(spec, spec.flag, flag), source: { kind: "flag", name: spec.flag } };
  for (const variable of variables) {
    const text = presentValue(env[variable]);
    if (text !== undefined) return { value: parsed(spec, variable, text), source: { kind: "env", name: variable } };
  }
  return code === undefined ? { value: spec.fallback, source: { kind: "default" } } : { value: code, source: { kind: "code" } };
}

function parsed<V>(spec: SettingSpec<V>, name: string, text: string): V {
  const value = spec.parse(text.trim());
  if (value === undefined) throw new EnvironmentError(name, spec.expected, text);
  return value;
}

function refuseSharedSuffixes(queues: readonly string[], env: Environment): void {
  const bySuffix = new Map<string, string[]>();
  for (const queue of new Set(queues)) bySuffix.set(queueVariableSuffix(queue), [...(bySuffix.get(queueVariableSuffix(queue)) ?? []), queue]);
  for (const [suffix, sharing] of bySuffix) {
    if (sharing.length < 2) continue;
    for (const spec of Object.values(TUNABLE_SETTINGS)) {
      const variable = `${spec.variable}_${suffix}`;
      const text = presentValue(env[variable]);
      if (text === undefined) continue;
      const names = sharing.map((queue) => JSON.stringify(queue)).join(" and ");
      throw new EnvironmentError(
        variable,
        `would set both queues ${names}, whose names make the same suffix: set ${spec.variable} or ${spec.flag} instead, or run them in separate processes`,
        text,
      );
    }
  }
}
