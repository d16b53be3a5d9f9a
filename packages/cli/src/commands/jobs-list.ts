import { ExitCode, type JobState } from "@stint/core";
import { assertQueueName, MAX_PAGE_SIZE } from "@stint/core/driver";
import { integerValue, jobIdValue, statesValue } from "../args/option-values";
import { configError } from "../cli-error";
import { stringOption, type Command } from "../command";
import { jobJson } from "../output/job-json";
import { formatTable, truncate } from "../output/table";
import { formatTime } from "../output/time-text";

/**
 * `stint jobs list`: jobs newest first, optionally of one queue and some
 * states, a page at a time (`--before-id` the last id shown).
 */
export const jobsListCommand: Command = {
  name: "jobs list",
  summary: "List jobs newest first, by queue and state",
  usage: ["jobs list [--queue Q] [--state S,…] [--limit 50] [--before-id ID] [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    queue: { type: "string", value: "Q", description: "only jobs of this queue" },
    state: { type: "string", value: "S,…", description: "only jobs in these states: queued, running, failed, succeeded, dead, cancelled" },
    limit: { type: "string", value: "N", description: "at most N jobs, 1 to 10000 (default 50)" },
    "before-id": { type: "string", value: "ID", description: "only jobs older than this id (the next page)" },
  },
  notes: ["Example: stint jobs list --queue send-invoice --state dead,failed --limit 20"],
  async run(context) {
    const queueText = stringOption(context, "queue");
    const queue = queueText === undefined ? undefined : assertQueueName(queueText);
    const stateText = stringOption(context, "state");
    const states: JobState[] | undefined = stateText === undefined ? undefined : statesValue("--state", stateText);
    const limit = integerValue("--limit", stringOption(context, "limit") ?? "50", 1, MAX_PAGE_SIZE);
    const beforeText = stringOption(context, "before-id");
    const beforeId = beforeText === undefined ? undefined : jobIdValue(beforeText);
    if (beforeText !== undefined && beforeId === undefined) {
      throw configError(`--before-id must be a job id (a positive integer), got ${JSON.stringify(beforeText)}`);
    }
    const { store } = await context.connect();
    const jobs = await store.listJobs({
      limit,
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
    context.out.line(
      formatTable(
        [
          { title: "id", align: "right" },
          { title: "queue" },
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
