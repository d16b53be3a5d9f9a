import { Cron } from "croner";
import { ConfigError } from "../errors/config-errors";
import type { SchedulePlan, ScheduleRecord, ScheduleSpec } from "../store/schedule-store";

/**
 * Parses a cron expression in a time zone, or throws a `ConfigError`
 * naming `option` with the parser's reason. Five fields (minute precision)
 * or six (with seconds first); see croner for the syntax.
 *
 * @example
 * ```ts
 * parseCron("0 9 * * 1", "Europe/Berlin"); // Mondays at 09:00 Berlin time
 * ```
 */
export function parseCron(expression: string, timeZone: string, option = "cron"): Cron {
  let cron: Cron;
  try {
    cron = new Cron(expression, { paused: true, timezone: timeZone });
    cron.nextRun(new Date(0));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(/timezone/i.test(reason) ? "timeZone" : option, `${JSON.stringify(expression)} in ${timeZone}: ${reason}`);
  }
  return cron;
}

/** The first fire time of a schedule strictly after `now`. */
export function firstRunAt(spec: ScheduleSpec, now: Date): Date {
  return nextAfter(parseCron(spec.cron, spec.timeZone), now, spec.name);
}

/**
 * Which fires of a due schedule to enqueue now and when the next one is:
 * of the fires from `nextRunAt` up to `now`, only the latest `catchUp`
 * (so after a day of downtime an hourly schedule with `catchUp: 1` runs
 * once, not 24 times), and the first fire after `now`.
 *
 * @example
 * ```ts
 * planFires({ ...record, cron: "0 * * * *", nextRunAt: new Date("2026-01-01T00:00Z"), catchUp: 2 }, new Date("2026-01-01T05:30Z"));
 * // { fires: [04:00, 05:00], nextRunAt: 06:00 }
 * ```
 */
export function planFires(schedule: ScheduleRecord, now: Date): SchedulePlan {
  const cron = parseCron(schedule.cron, schedule.timeZone);
  const justAfterNow = new Date(now.getTime() + 1);
  const fires = cron
    .previousRuns(Math.max(1, schedule.catchUp), justAfterNow)
    .filter((fire) => fire.getTime() >= schedule.nextRunAt.getTime())
    .sort((a, b) => a.getTime() - b.getTime());
  return { fires, nextRunAt: nextAfter(cron, now, schedule.name) };
}

function nextAfter(cron: Cron, now: Date, name: string): Date {
  const next = cron.nextRun(now);
  if (next === null) throw new ConfigError("cron", `schedule ${name} never fires again`);
  return next;
}
