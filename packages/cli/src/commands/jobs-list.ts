import { ExitCode, type JobRecord, type JobState } from "@stint/core";
import { assertQueueName, assertStorableKey, MAX_GROUP_KEY_LENGTH, MAX_PAGE_SIZE } from "@stint/core/driver";
import { beforeIdOption, integerValue, statesValue } from "../args/option-values";
import { configError } from "../cli-error";
import { stringOption, type Command, type CommandContext } from "../command";
import { jobJson } from "../output/job-json";
import { formatTable, truncate } from "../output/table";
import { formatTime } from "../output/time-text";

/**
 * `stint jobs list`: jobs newest first, optionally of one queue and some
 * states, or of one group or serial line of a queue, a page at a time
 * (`--before-id` the last id shown). A `group` column shows when a listed
 * job has a group or serial key.
 */
export const jobsListCommand: Command = {
  name: "jobs list",
  summary: "List jobs newest first, by queue, state and group",
  usage: ["jobs list [--queue Q [--group KEY | --serial-key KEY]] [--state S,…] [--limit 50] [--before-id ID] [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    queue: { type: "string", value: "Q", description: "only jobs of this queue" },
    state: {
      type: "string",
      value: "S,…",
      description: "only jobs in these states: blocked (workflow steps waiting), queued, running, failed, succeeded, dead, cancelled",
    },
    group: { type: "string", value: "KEY", description: "only jobs of this group of the queue (enqueued with `group`; needs --queue)" },
    "serial-key": { type: "string", value: "KEY", description: "only jobs of this serial line of the queue (enqueued with `serialKey`; needs --queue)" },
    limit: { type: "string", value: "N", description: "at most N jobs, 1 to 10000 (default 50)" },
    "before-id": { type: "string", value: "ID", description: "only jobs older than this id (the next page)" },
  },
  notes: [
    "In the group column, a serial key shows as `line KEY`. `stint groups <queue>` lists a queue's busiest groups.",
    "",
    "Examples:",
    "  stint jobs list --queue send-invoice --state dead,failed --limit 20",
    "  stint jobs list --queue sync-tenant --group tenant-42 --state queued,running",
  ],
  async run(context) {
    const queueText = stringOption(context, "queue");
    const queue = queueText === undefined ? undefined : assertQueueName(queueText);
    const stateText = stringOption(context, "state");
    const states: JobState[] | undefined = stateText === undefined ? undefined : statesValue("--state", stateText);
    const limit = integerValue("--limit", stringOption(context, "limit") ?? "50", 1, MAX_PAGE_SIZE);
    const beforeId = beforeIdOption(stringOption(context, "before-id"), "job");
    const group = groupFilter(context, queue);
    const { store } = await context.connect();
    const jobs = await store.listJobs({
      limit,
      ...group,
      ...(queue === undefined ? {} : { queue }),
      ...(states === undefined ? {} : { states }),
      ...(beforeId === undefined ? {} : { beforeId }),
    });
    const nextBeforeId = jobs.length === limit ? jobs[jobs.length - 1]!.id : null;
    if (context.json) {
      context.out.json({ jobs: jobs.map(jobJson), nextBeforeId });
      return ExitCode.Ok;
    }
    if (jobs.length === 0) {
      context.out.line("No jobs match.");
      return ExitCode.Ok;
    }
    const grouped = jobs.some((job) => job.group !== null || job.serialKey !== null);
    context.out.line(
      formatTable(
        [
          { title: "id", align: "right" },
          { title: "queue" },
          ...(grouped ? [{ title: "group" }] : []),
          { title: "state" },
          { title: "attempts", align: "right" },
          { title: "priority", align: "right" },
          { title: "run at" },
          { title: "finished at" },
          { title: "last error" },
        ],
        jobs.map((job) => [
          job.id,
          job.queue,
          ...(grouped ? [groupText(job)] : []),
          job.state,
          `${job.attempts}/${job.maxAttempts}`,
          String(job.priority),
          formatTime(job.runAt),
          formatTime(job.finishedAt),
          job.lastError === null ? "" : truncate(job.lastError, 60),
        ]),
      ),
    );
    if (nextBeforeId !== null) context.out.line(`\nMore: add --before-id ${nextBeforeId} for the next page.`);
    return ExitCode.Ok;
  },
};

/** `--group` or `--serial-key`, checked: a key of the queue given with `--queue`, one or the other. */
function groupFilter(context: CommandContext, queue: string | undefined): { group?: string; serialKey?: string } {
  const group = stringOption(context, "group");
  const serialKey = stringOption(context, "serial-key");
  if (group === undefined && serialKey === undefined) return {};
  if (group !== undefined && serialKey !== undefined) throw configError("--group and --serial-key cannot be given together: a job has one or the other");
  if (queue === undefined) throw configError(`${group === undefined ? "--serial-key" : "--group"} needs --queue: a group's key names it within one queue`);
  return group === undefined
    ? { serialKey: assertStorableKey("--serial-key", serialKey, MAX_GROUP_KEY_LENGTH) }
    : { group: assertStorableKey("--group", group, MAX_GROUP_KEY_LENGTH) };
}

/** The group column: the group's key, `line KEY` for a serial key, or empty. */
function groupText(job: JobRecord): string {
  if (job.group !== null) return truncate(job.group, 40);
  return job.serialKey === null ? "" : `line ${truncate(job.serialKey, 35)}`;
}
