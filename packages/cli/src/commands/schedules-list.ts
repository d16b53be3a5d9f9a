import { CliError } from "../cli-error";
import type { Command } from "../command";
import { ExitCode } from "@stint/core";
import { formatTable } from "../output/table";
import { formatTime, isoTime } from "../output/time-text";

/** `stint schedules list`: the stored periodic schedules and when each fires next. */
export const schedulesListCommand: Command = {
  name: "schedules list",
  summary: "List periodic schedules: cron, time zone, next run, last fired",
  usage: ["schedules list [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {},
  notes: ["Schedules are declared in the application's code and written to the database when its workers start."],
  async run(context) {
    const { schedules } = await context.connect();
    if (schedules === undefined) {
      throw new CliError(ExitCode.Failure, "this version of @stint/postgres-driver registers no schedule store");
    }
    const records = await schedules.listSchedules();
    if (context.json) {
      context.out.json({
        schedules: records.map((record) => ({
          name: record.name,
          queue: record.queue,
          cron: record.cron,
          timeZone: record.timeZone,
          nextRunAt: isoTime(record.nextRunAt),
          lastFiredAt: isoTime(record.lastFiredAt),
          enabled: record.enabled,
          catchUp: record.catchUp,
          priority: record.priority,
          maxAttempts: record.maxAttempts,
          timeoutMs: record.timeoutMs,
          payload: JSON.parse(record.payloadJson) as unknown,
        })),
      });
      return ExitCode.Ok;
    }
    if (records.length === 0) {
      context.out.line(`No schedules in schema "${context.schema}".`);
      return ExitCode.Ok;
    }
    context.out.line(
      formatTable(
        [
          { title: "name" },
          { title: "queue" },
          { title: "cron" },
          { title: "time zone" },
          { title: "next run" },
          { title: "last fired" },
          { title: "enabled" },
        ],
        records.map((record) => [
          record.name,
          record.queue,
          record.cron,
          record.timeZone,
          formatTime(record.nextRunAt),
          formatTime(record.lastFiredAt),
          record.enabled ? "yes" : "no",
        ]),
      ),
    );
    return ExitCode.Ok;
  },
};
