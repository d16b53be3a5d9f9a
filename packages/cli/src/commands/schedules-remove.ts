import { ExitCode } from "@stint/core";
import { isScheduleLive } from "@stint/core/internal";
import { SCHEDULE_GRACE_OPTION, scheduleGraceOf } from "../args/schedule-grace";
import { notFoundError } from "../cli-error";
import type { Command } from "../command";
import { connectSchedules } from "../connection/connect-schedules";
import { formatTime } from "../output/time-text";

/**
 * `stint schedules remove NAME`: deletes one schedule now, whatever its
 * origin. Exit 3 when there is no such schedule. Removing a schedule that
 * running processes still declare only lasts until their next declaration,
 * which the command says on stderr.
 */
export const schedulesRemoveCommand: Command = {
  name: "schedules remove",
  summary: "Delete a schedule now (one removed from the code, or created at run time)",
  usage: ["schedules remove <name> [--schedule-grace 1d] [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: { "schedule-grace": SCHEDULE_GRACE_OPTION },
  notes: [
    "A schedule deleted from the code stops by itself once no process has declared it for the grace",
    "(STINT_SCHEDULE_GRACE, a day by default); this removes it at once. Jobs it already enqueued stay.",
    "A schedule the code still declares comes back when a running process declares it again (at start",
    "and every hour): take it out of the code first. --schedule-grace only decides whether to say so.",
    "",
    "Example:",
    "  stint schedules remove nightly-cleanup.audit-events",
  ],
  async run(context) {
    const name = context.positionals[0]!;
    const graceMs = scheduleGraceOf(context);
    const { schedules } = await connectSchedules(context);
    const removed = await schedules.removeSchedule({ name });
    if (removed === undefined) throw notFoundError(`schedule "${name}" not found in schema "${context.schema}" (see \`stint schedules list\`)`);
    const stillDeclared = removed.origin === "code" && isScheduleLive(removed, Date.now(), graceMs);
    if (stillDeclared) {
      context.out.note(
        `stint: warning: schedule "${name}" was declared in code at ${formatTime(removed.declaredAt)}, within the grace: ` +
          "a process that still declares it puts it back at its next declaration (at start, then hourly); take it out of the code to stop it for good",
      );
    }
    if (context.json) {
      context.out.json({ name, removed: true, origin: removed.origin, stillDeclared });
    } else {
      context.out.line(`Removed schedule "${name}" (${removed.origin === "code" ? "declared in code" : "created at run time"}, queue ${removed.queue}).`);
    }
    return ExitCode.Ok;
  },
};
