import { ExitCode, type ScheduleRecord } from "@stint/core";
import { formatDuration, isScheduleLive } from "@stint/core/internal";
import { SCHEDULE_GRACE_OPTION, scheduleGraceOf } from "../args/schedule-grace";
import type { Command } from "../command";
import { connectSchedules } from "../connection/connect-schedules";
import { formatTable } from "../output/table";
import { formatTime, isoTime } from "../output/time-text";

/** What `schedules list` says of a schedule: still firing, or undeclared for longer than the grace. */
type ScheduleStatus = "live" | "expired";

/** `stint schedules list`: every stored schedule, where it comes from, whether it still fires and when it fires next. */
export const schedulesListCommand: Command = {
  name: "schedules list",
  summary: "List periodic schedules: origin, last declaration, live or expired, next run",
  usage: ["schedules list [--schedule-grace 1d] [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: { "schedule-grace": SCHEDULE_GRACE_OPTION },
  notes: [
    "Origin `code`: declared in the application's code (defineSchedule), written by its processes when they",
    "start and again every hour while they run. One that no process has declared for the grace is `expired`:",
    "it stays listed but no longer fires (`stint schedules remove NAME` deletes it). Origin `runtime`: created",
    "with `stint schedules add` or ScheduleClient; it never expires. The grace is the workers' setting",
    "(STINT_SCHEDULE_GRACE); give this command the same one. `next run` is `-` for a schedule that will",
    "not fire (expired or disabled).",
  ],
  async run(context) {
    const graceMs = scheduleGraceOf(context);
    const { schedules } = await connectSchedules(context);
    const records = await schedules.listSchedules();
    const now = Date.now();
    const statusOf = (record: ScheduleRecord): ScheduleStatus => (isScheduleLive(record, now, graceMs) ? "live" : "expired");
    if (context.json) {
      context.out.json({ graceMs, schedules: records.map((record) => scheduleJson(record, statusOf(record), graceMs)) });
      return ExitCode.Ok;
    }
    if (records.length === 0) {
      context.out.line(`No schedules in schema "${context.schema}".`);
      return ExitCode.Ok;
    }
    const titles = ["name", "queue", "cron", "time zone", "origin", "declared", "status", "enabled", "next run", "last fired"];
    const rows = records.map((record) => {
      const status = statusOf(record);
      const fires = status === "live" && record.enabled;
      return [
        record.name,
        record.queue,
        record.cron,
        record.timeZone,
        record.origin,
        formatTime(record.declaredAt),
        status,
        record.enabled ? "yes" : "no",
        fires ? formatTime(record.nextRunAt) : "-",
        formatTime(record.lastFiredAt),
      ];
    });
    context.out.line(
      formatTable(
        titles.map((title) => ({ title })),
        rows,
      ),
    );
    const expired = rows.filter((row) => row[6] === "expired").length;
    if (expired > 0) {
      const [count, them, they] = expired === 1 ? ["1 schedule is", "it", "it no longer fires"] : [`${expired} schedules are`, "them", "they no longer fire"];
      context.out.line(
        `\n${count} expired: no process has declared ${them} for ${formatDuration(graceMs)}, so ${they} (\`stint schedules remove NAME\` deletes one).`,
      );
    }
    return ExitCode.Ok;
  },
};

function scheduleJson(record: ScheduleRecord, status: ScheduleStatus, graceMs: number): Record<string, unknown> {
  return {
    name: record.name,
    queue: record.queue,
    cron: record.cron,
    timeZone: record.timeZone,
    origin: record.origin,
    declaredAt: isoTime(record.declaredAt),
    status,
    expiresAt: record.origin === "code" ? isoTime(new Date(record.declaredAt.getTime() + graceMs)) : null,
    nextRunAt: isoTime(record.nextRunAt),
    lastFiredAt: isoTime(record.lastFiredAt),
    enabled: record.enabled,
    catchUp: record.catchUp,
    priority: record.priority,
    maxAttempts: record.maxAttempts,
    timeoutMs: record.timeoutMs,
    payload: JSON.parse(record.payloadJson) as unknown,
  };
}
