import { ACTIVE_JOB_STATES, ExitCode, type JobStore } from "@stint/core";
import { assertQueueName } from "@stint/core/driver";
import { integerValue, jobIdArgument } from "../args/option-values";
import { jobNotFound, usageError, wrongStateError, type CliError } from "../cli-error";
import { stringOption, type Command, type CommandContext } from "../command";
import { startProgress } from "../output/progress";
import { formatCount } from "../output/table";

/** Jobs per `retryDeadJobs` statement with `--dead`. */
export const RETRY_BATCH_SIZE = 500;

/**
 * `stint retry <id>` runs one failed, dead or cancelled job again now with
 * a fresh attempt budget; `stint retry --dead <queue>` does so for the dead
 * jobs of a queue, 500 per statement, at most as many as were dead when it
 * started. Exit 3 when the job does not exist, 4 when it cannot be retried
 * in its state (still active, succeeded, or its dedupe key is taken).
 */
export const retryCommand: Command = {
  name: "retry",
  summary: "Run a failed, dead or cancelled job again now; or every dead job of a queue",
  usage: ["retry <id> [--json]", "retry --dead <queue> [--limit N] [--json]"],
  args: { min: 0, max: 1 },
  json: true,
  options: {
    dead: { type: "string", value: "QUEUE", description: "retry the dead jobs of this queue" },
    limit: { type: "string", value: "N", description: "with --dead: at most N jobs (default: all)" },
  },
  notes: [
    "A retried job gets a fresh attempt budget. A job whose dedupe key an active job holds stays as it is.",
    "",
    "Examples:",
    "  stint retry 812",
    "  stint retry --dead send-invoice --limit 1000",
  ],
  async run(context) {
    const queue = stringOption(context, "dead");
    const idText = context.positionals[0];
    if (queue !== undefined && idText !== undefined) throw usageError("give either a job id or --dead <queue>, not both");
    if (queue === undefined && idText === undefined) throw usageError("retry: missing the job id (or --dead <queue>)");
    if (queue === undefined && stringOption(context, "limit") !== undefined) throw usageError("--limit goes with --dead <queue>");
    if (queue !== undefined) return retryDead(context, assertQueueName(queue));
    return retryOne(context, idText!);
  },
};

async function retryOne(context: CommandContext, idText: string): Promise<number> {
  const id = jobIdArgument(idText);
  const { store } = await context.connect();
  if (!(await store.retryJob({ id }))) throw await whyNotRetried(store, id, context.schema);
  if (context.json) context.out.json({ id, retried: true });
  else context.out.line(`Job ${id} is queued to run again now.`);
  return ExitCode.Ok;
}

async function whyNotRetried(store: JobStore, id: string, schema: string): Promise<CliError> {
  const job = await store.getJob({ id });
  if (job === undefined) return jobNotFound(id, schema);
  if (job.state === "blocked" || ((ACTIVE_JOB_STATES as readonly string[]).includes(job.state) && job.state !== "failed")) {
    return wrongStateError(`job ${id} is ${job.state}: only failed, dead or cancelled jobs can be retried`);
  }
  if (job.state === "succeeded") {
    return wrongStateError(`job ${id} has succeeded: only failed, dead or cancelled jobs can be retried`);
  }
  return wrongStateError(`job ${id} was not retried: an active job of ${job.queue} holds its dedupe key ${JSON.stringify(job.dedupeKey)}`);
}

async function retryDead(context: CommandContext, queue: string): Promise<number> {
  const limitText = stringOption(context, "limit");
  const limit = limitText === undefined ? Number.POSITIVE_INFINITY : integerValue("--limit", limitText, 1, 100_000_000);
  const { store } = await context.connect();
  const [counts] = await store.countByQueue({ queues: [queue] });
  // Never more than were dead at the start: jobs that die again meanwhile are not retried twice.
  const total = Math.min(limit, counts?.counts.dead ?? 0);
  const progress = startProgress(context.io.stderr, { label: `retry dead ${queue}`, total, unit: "jobs" });
  let retried = 0;
  let interrupted = false;
  try {
    while (retried < total) {
      if (context.signal.aborted) {
        interrupted = true;
        break;
      }
      const batch = Math.min(RETRY_BATCH_SIZE, total - retried);
      const done = await store.retryDeadJobs({ queue, limit: batch });
      retried += done;
      progress.update(retried);
      if (done < batch) break;
    }
  } finally {
    progress.stop();
  }
  if (context.json) context.out.json({ queue, retried, interrupted });
  else if (interrupted) context.out.line(`Interrupted: ${formatCount(retried)} dead jobs of ${queue} are queued to run again.`);
  else if (retried === 0) context.out.line(`No dead jobs of ${queue} to retry.`);
  else context.out.line(`${formatCount(retried)} dead jobs of ${queue} are queued to run again now.`);
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}
