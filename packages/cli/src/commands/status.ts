import { ExitCode } from "@stint/core";
import type { Command } from "../command";
import { countQueues } from "../connection/driver-features";
import { formatCount, formatTable } from "../output/table";
import { humanDuration } from "../output/time-text";

/** The window of the "done" column: jobs that succeeded in the last five minutes. */
export const COMPLETED_WINDOW_MS = 5 * 60_000;

/**
 * `stint status`: one row per queue with its queued, due, running, retrying
 * (`failed`) and dead jobs, the age of the oldest due job (the queue lag)
 * and the jobs that succeeded in the last five minutes.
 */
export const statusCommand: Command = {
  name: "status",
  summary: "Show each queue's jobs by state, its lag and recent throughput",
  usage: ["status [queue…] [--json]"],
  args: { min: 0, max: Number.POSITIVE_INFINITY },
  json: true,
  options: {},
  notes: [
    "Columns: queued (waiting, due or not), due (waiting and due now), running, retrying (failed, retry scheduled),",
    "dead, oldest due (age of the oldest due job: the queue lag), done 5m (succeeded in the last 5 minutes).",
  ],
  async run(context) {
    const { store } = await context.connect();
    const queues = context.positionals.length === 0 ? undefined : context.positionals;
    const rows = await countQueues(store, { ...(queues === undefined ? {} : { queues }), completedSinceMs: COMPLETED_WINDOW_MS });
    if (context.json) {
      context.out.json({
        schema: context.schema,
        queues: rows.map((row) => ({
          queue: row.queue,
          queued: row.counts.queued,
          due: row.due,
          running: row.counts.running,
          retrying: row.counts.failed,
          dead: row.counts.dead,
          succeeded: row.counts.succeeded,
          cancelled: row.counts.cancelled,
          oldestDueAgeMs: row.oldestDueAgeMs,
          completedLast5m: row.completedRecently,
        })),
      });
      return ExitCode.Ok;
    }
    if (rows.length === 0) {
      context.out.line(`No jobs in schema "${context.schema}".`);
      return ExitCode.Ok;
    }
    const right = "right" as const;
    context.out.line(
      formatTable(
        [
          { title: "queue" },
          { title: "queued", align: right },
          { title: "due", align: right },
          { title: "running", align: right },
          { title: "retrying", align: right },
          { title: "dead", align: right },
          { title: "oldest due", align: right },
          { title: "done 5m", align: right },
        ],
        rows.map((row) => [
          row.queue,
          formatCount(row.counts.queued),
          formatCount(row.due),
          formatCount(row.counts.running),
          formatCount(row.counts.failed),
          formatCount(row.counts.dead),
          row.oldestDueAgeMs === null ? "-" : humanDuration(row.oldestDueAgeMs),
          row.completedRecently === null ? "n/a" : formatCount(row.completedRecently),
        ]),
      ),
    );
    return ExitCode.Ok;
  },
};
