import type { Environment } from "../logging/log-settings";
import { LOG_LEVEL_SETTING, SCHEDULE_GRACE_SETTING, TUNABLE_SETTINGS } from "./setting-specs";
import { presentValue } from "./settings-variables";

const PREFIX = "STINT_";

/** The setting names after `STINT_`: `CONCURRENCY`, `POLL_INTERVAL`, … */
const TUNABLE_STEMS = Object.values(TUNABLE_SETTINGS).map((spec) => spec.variable.slice(PREFIX.length));
/** The settings of the whole process, which have no per-queue variable. */
const PROCESS_SETTINGS = [LOG_LEVEL_SETTING, SCHEDULE_GRACE_SETTING];
const PROCESS_STEMS = PROCESS_SETTINGS.map((spec) => spec.variable.slice(PREFIX.length));

/** Other variables stint reads (the CLI's app and schema, the log format). */
const OTHER_KNOWN = new Set(["STINT_APP", "STINT_SCHEMA", "STINT_LOG_FORMAT", ...PROCESS_SETTINGS.map((spec) => spec.variable)]);

/** How many edits away a name may be from a setting's to count as a misspelling of it. */
const MAX_EDITS = 2;

/**
 * Warnings for set `STINT_*` variables that look like a misspelt setting
 * (`STINT_CONCURENCY`, `STINT_SHUTDOWN_TIMOUT_AI_SUMMARY`) or a per-queue log
 * level, which does not exist. They are warnings, not errors: the `STINT_`
 * prefix is shared with variables of other tools and of the application, and
 * a variable a newer version reads must not stop an older worker that shares
 * its ConfigMap. A variable more than two edits from every setting is not
 * reported.
 *
 * @example
 * ```ts
 * misspeltVariableWarnings({ STINT_CONCURENCY: "4" });
 * // ["STINT_CONCURENCY is not a stint setting and is ignored; did you mean STINT_CONCURRENCY?"]
 * ```
 */
export function misspeltVariableWarnings(env: Environment): readonly string[] {
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith(PREFIX) || OTHER_KNOWN.has(name) || presentValue(env[name]) === undefined) continue;
    const rest = name.slice(PREFIX.length);
    if (TUNABLE_STEMS.some((stem) => rest === stem || rest.startsWith(`${stem}_`))) continue;
    const processSetting = PROCESS_SETTINGS.find((_spec, index) => rest.startsWith(`${PROCESS_STEMS[index]}_`));
    if (processSetting !== undefined) {
      warnings.push(`${name} is ignored: the ${processSetting.flag.slice(2).replace("-", " ")} is one per process, set by ${processSetting.variable}`);
      continue;
    }
    const meant = closestSetting(rest);
    if (meant !== undefined) warnings.push(`${name} is not a stint setting and is ignored; did you mean ${PREFIX}${meant}?`);
  }
  return Object.freeze(warnings);
}

/** The setting name (with the rest of the queue suffix) `rest` is a near miss of, if any. */
function closestSetting(rest: string): string | undefined {
  const parts = rest.split("_");
  for (let count = 1; count <= parts.length; count += 1) {
    const head = parts.slice(0, count).join("_");
    const tail = parts.slice(count).join("_");
    for (const stem of [...TUNABLE_STEMS, ...PROCESS_STEMS]) {
      if (editDistance(head, stem) <= MAX_EDITS) return tail === "" ? stem : `${stem}_${tail}`;
    }
  }
  return undefined;
}

/** Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}
