import { describeSource, LOG_LEVEL_SETTING, SCHEDULE_GRACE_SETTING, TUNABLE_SETTINGS, type RunSettings, type SettingSpec } from "@stint/core/internal";
import type { TunableSetting } from "@stint/core";
import type { ConnectionSettingRow } from "./connection-settings";
import { QUEUE_CONTROLS_ROW } from "./queue-controls-row";
import { retentionRow, type RunRetention } from "./run-retention";
import { formatTable } from "./table";

/**
 * The resolved settings of a run as `stint run --print-config` prints them:
 * per queue, each setting under its flag's name, its value as the flag and
 * the variable spell it, and where it came from, and the job kind's
 * dead-letter queue; then the process-wide log
 * level, schedule grace and, when given, retention (its global days; each
 * queue's own are in the database, see `stint retention`), where the
 * queue controls are (pause, `max-running`, `max-running-per-group`, rate
 * limit: in the database, see `stint status` and `stint groups`), and the
 * connection settings (`prepared-statements`, `session-database-url`)
 * when given.
 *
 * @example
 * ```ts
 * formatSettings(settings);
 * // queue     setting           value  source
 * // --------  ----------------  -----  ------------------
 * // cli-echo  concurrency       8      flag --concurrency
 * // cli-echo  lease             1m     default
 * // …
 * // cli-echo  dead-letter-queue -      code (job kind)
 * // (all)     log-level         info   env STINT_LOG_LEVEL
 * // (all)     schedule-grace    1d     default
 * // (all)     queue-controls    in the database, not read here  stint status; stint limit <queue>; stint groups <queue>
 * // (database) prepared-statements auto default
 * ```
 */
export function formatSettings(settings: RunSettings, database: readonly ConnectionSettingRow[] = [], retention?: RunRetention): string {
  const rows = settings.queues.flatMap(({ queue, settings: values, deadLetterQueue }) => [
    ...(Object.keys(TUNABLE_SETTINGS) as TunableSetting[]).map((key) => {
      const spec = TUNABLE_SETTINGS[key] as SettingSpec<unknown>;
      return [queue, spec.flag.slice(2), spec.format(values[key].value), describeSource(values[key].source)];
    }),
    ...(deadLetterQueue === undefined ? [] : [[queue, "dead-letter-queue", deadLetterQueue ?? "-", "code (job kind)"]]),
  ]);
  const { logLevel, scheduleGraceMs } = settings;
  rows.push(["(all)", LOG_LEVEL_SETTING.flag.slice(2), logLevel.value, describeSource(logLevel.source)]);
  rows.push(["(all)", SCHEDULE_GRACE_SETTING.flag.slice(2), SCHEDULE_GRACE_SETTING.format(scheduleGraceMs.value), describeSource(scheduleGraceMs.source)]);
  if (retention !== undefined) rows.push(["(all)", "retention", ...retentionRow(retention)]);
  rows.push(["(all)", "queue-controls", ...QUEUE_CONTROLS_ROW]);
  for (const row of database) rows.push(["(database)", row.setting, row.value ?? "(the DATABASE_URL)", row.source]);
  return formatTable([{ title: "queue" }, { title: "setting" }, { title: "value" }, { title: "source" }], rows);
}
