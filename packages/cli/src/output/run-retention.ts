import { DEFAULT_RETENTION_DAYS } from "@stint/core/internal";

/** The retention a `stint run` applies, as `--print-config` shows it. */
export interface RunRetention {
  /** The global days its maintenance pass keeps finished jobs, per state; `null` in once mode, which prunes nothing. */
  readonly globalDays: { readonly succeededDays: number; readonly deadDays: number; readonly cancelledDays: number } | null;
  /** Where each queue's own days are: in the database, which `--print-config` does not read. */
  readonly queueDays: string;
}

const QUEUE_DAYS = "in the database, not read here: stint retention lists every queue's";

/**
 * The retention of a `stint run` in `mode`: in loop mode the maintenance
 * pass's global days (the defaults: `stint run` passes none), each queue's
 * own days replacing them where set; in once mode none (`stint prune` on
 * a CronJob does it).
 *
 * @example
 * ```ts
 * runRetention("loop").globalDays; // { succeededDays: 7, deadDays: 30, cancelledDays: 7 }
 * ```
 */
export function runRetention(mode: "once" | "loop"): RunRetention {
  if (mode === "once") return Object.freeze({ globalDays: null, queueDays: QUEUE_DAYS });
  const { succeededDays, deadDays } = DEFAULT_RETENTION_DAYS;
  return Object.freeze({ globalDays: Object.freeze({ succeededDays, deadDays, cancelledDays: succeededDays }), queueDays: QUEUE_DAYS });
}

/**
 * The `--print-config` row of a run's retention: value, then source.
 *
 * @example
 * ```ts
 * retentionRow(runRetention("loop")); // ["succeeded 7d, dead 30d, cancelled 7d", "default; a queue's own: stint retention"]
 * ```
 */
export function retentionRow(retention: RunRetention): readonly [string, string] {
  const days = retention.globalDays;
  if (days === null) return ["none", "once mode prunes nothing (stint prune does); a queue's own: stint retention"];
  return [`succeeded ${days.succeededDays}d, dead ${days.deadDays}d, cancelled ${days.cancelledDays}d`, "default; a queue's own: stint retention"];
}
