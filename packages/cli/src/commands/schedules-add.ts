import { defineJob, ExitCode, ScheduleClient, type JobDefinition, type ScheduleOptions } from "@stint/core";
import { appJobKind } from "../app/app-job-kind";
import { asFlagError } from "../args/flag-error";
import { integerValue } from "../args/option-values";
import { usageError } from "../cli-error";
import { flagOption, stringOption, type Command } from "../command";
import { connectSchedules } from "../connection/connect-schedules";
import { assertQueueInUse } from "../input/queue-in-use";
import { parsePayload } from "../input/spool-payloads";
import { formatTime } from "../output/time-text";

/** The CLI's name of each schedule option, for messages. */
const FLAGS: Readonly<Record<string, string>> = {
  name: "<name>",
  cron: "--cron",
  timeZone: "--tz",
  catchUp: "--catch-up",
};

/**
 * `stint schedules add NAME --queue Q --cron EXPR`: creates a runtime
 * schedule, or changes the runtime schedule of that name (the newest
 * definition wins; its next run is kept unless the cron or time zone
 * changed). Runtime schedules are kept until removed; a name the code
 * declares is refused with exit 4. The job settings are the job kind's
 * (the app's, with `--app`, whose schema then checks the payload), else
 * stint's defaults.
 */
export const schedulesAddCommand: Command = {
  name: "schedules add",
  summary: "Create or change a runtime schedule (kept until removed)",
  usage: ["schedules add <name> --queue Q --cron EXPR [--tz ZONE] [--payload JSON] [--catch-up N] [--app MODULE | --force] [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {
    queue: { type: "string", value: "Q", description: "the queue each fire enqueues a job on" },
    cron: { type: "string", value: "EXPR", description: 'a cron expression: 5 fields, or 6 with seconds first, e.g. "0 9 * * 1"' },
    tz: { type: "string", value: "ZONE", description: "IANA time zone the expression is read in, e.g. Europe/Berlin (default: UTC)" },
    payload: { type: "string", value: "JSON", description: "the payload of every job it enqueues (default: {})" },
    "catch-up": { type: "string", value: "N", description: "after downtime, enqueue at most the N latest missed fires, 1-1000 (default: 1)" },
    app: { type: "string", value: "MODULE", description: "take the job kind (defaults, payload schema) from this app module (default: $STINT_APP)" },
    force: { type: "boolean", description: "schedule on a queue that is not known (as `stint enqueue --force`)" },
  },
  notes: [
    "A runtime schedule fires like one declared in code, once per fire however many processes tick, and is",
    "kept until `stint schedules remove NAME`: it never expires. Its name cannot be one the code declares (exit 4).",
    "With --app (or $STINT_APP), the queue must have a worker in the app: its job kind gives the job settings",
    "and its schema checks the payload. Without it, stint's defaults apply, and a queue with no jobs and no",
    "schedule is refused as probably misspelt unless --force.",
    "",
    "Examples:",
    `  stint schedules add digest.tenant-42 --queue send-digest --cron "0 8 * * *" --tz Europe/Berlin --payload '{"tenantId": 42}'`,
    `  stint schedules add weekly-export --queue export --cron "0 3 * * 0" --app ./dist/stint-app.js`,
  ],
  async run(context) {
    const name = context.positionals[0]!;
    const queue = stringOption(context, "queue");
    const cron = stringOption(context, "cron");
    if (queue === undefined) throw usageError("schedules add: missing --queue (the queue each fire enqueues a job on)");
    if (cron === undefined) throw usageError('schedules add: missing --cron (e.g. --cron "0 9 * * 1")');
    const payloadText = stringOption(context, "payload");
    const catchUp = stringOption(context, "catch-up");
    const force = flagOption(context, "force");
    const app = stringOption(context, "app") ?? (context.io.env["STINT_APP"]?.trim() || undefined);
    const kind: JobDefinition<unknown> = (app === undefined ? undefined : await appJobKind(context, app, queue, force)) ?? defineJob<unknown>(queue);
    const options: ScheduleOptions<unknown> = {
      name,
      job: kind,
      cron,
      timeZone: stringOption(context, "tz") ?? "UTC",
      payload: payloadText === undefined ? {} : parsePayload(payloadText, "--payload"),
      // defineSchedule holds it to its range, named as --catch-up below.
      ...(catchUp === undefined ? {} : { catchUp: integerValue("--catch-up", catchUp, 1, Number.MAX_SAFE_INTEGER) }),
    };
    const connection = await connectSchedules(context);
    if (app === undefined && !force) await assertQueueInUse(connection, queue, "schedule on a new queue");
    const { schedule, created } = await upsert(new ScheduleClient(connection.schedules), options);
    if (context.json) {
      context.out.json({ name, created, queue: schedule.queue, cron: schedule.cron, timeZone: schedule.timeZone, nextRunAt: schedule.nextRunAt.toISOString() });
    } else {
      const verb = created ? "Added" : "Updated";
      context.out.line(`${verb} schedule "${name}" on ${schedule.queue}: ${schedule.cron} (${schedule.timeZone}), next run ${formatTime(schedule.nextRunAt)}.`);
    }
    return ExitCode.Ok;
  },
};

/** `ScheduleClient.upsert`, with its option names turned into the CLI's flags. */
async function upsert(client: ScheduleClient, options: ScheduleOptions<unknown>): ReturnType<ScheduleClient["upsert"]> {
  try {
    return await client.upsert(options);
  } catch (thrown) {
    throw asFlagError(thrown, FLAGS);
  }
}
