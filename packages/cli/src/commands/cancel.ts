import { ExitCode, QueueAdmin, type JobStore } from "@stint/core";
import { assertQueueName, type WaitingJobState } from "@stint/core/driver";
import { integerValue, jobIdArgument, statesValue } from "../args/option-values";
import { configError, jobNotFound, usageError, wrongStateError, type CliError } from "../cli-error";
import { stringOption, type Command, type CommandContext } from "../command";
import { startProgress } from "../output/progress";
import { formatCount } from "../output/table";

/** What became of one id of `stint cancel <id…>`. */
type IdOutcome =
  | { readonly id: string; readonly cancelled: true; readonly wasRunning: boolean }
  | { readonly id: string; readonly cancelled: false; readonly refusal: CliError };

/**
 * `stint cancel <id…>` cancels blocked, queued, retrying or running jobs; a running
 * one's worker is told to stop its handler (its `ctx.signal` aborts with
 * `STINT_CANCELLED`). `stint cancel --queue Q --state queued,failed` cancels
 * a queue's waiting jobs in bulk, 1,000 per statement, at most as many as
 * waited when it started. Exit 3 when a job does not exist, 4 when one has
 * already finished (the others are cancelled all the same), 130 when
 * interrupted between batches.
 */
export const cancelCommand: Command = {
  name: "cancel",
  summary: "Cancel jobs that have not finished: by id, or a queue's waiting jobs",
  usage: ["cancel <id…> [--json]", "cancel --queue <queue> --state queued|failed|queued,failed [--limit N] [--json]"],
  args: { min: 0, max: Number.POSITIVE_INFINITY },
  json: true,
  options: {
    queue: { type: "string", value: "QUEUE", description: "cancel the waiting jobs of this queue (with --state)" },
    state: { type: "string", value: "STATES", description: "with --queue: queued, failed (a retry is scheduled), or both: queued,failed" },
    limit: { type: "string", value: "N", description: "with --queue: at most N jobs (default: all that wait now)" },
  },
  notes: [
    "A running job's worker is told at once to stop its handler: `ctx.signal` aborts with STINT_CANCELLED. A worker",
    "that hears no notifications (`run --once`, or behind a transaction pooler) stops it at its next heartbeat, a third",
    "of its lease after the last one.",
    "Nothing of the attempt is written after the cancel; it is not retried, and onDead is not called.",
    "Running jobs are cancelled by id only, never in bulk.",
    "",
    "Exit codes: 0 every job cancelled; 3 a job does not exist; 4 a job had already finished (the other ids are",
    "cancelled all the same); 130 interrupted between batches.",
    "",
    "Examples:",
    "  stint cancel 812",
    "  stint cancel 812 813 814 --json",
    "  stint cancel --queue send-invoice --state queued,failed",
  ],
  async run(context) {
    const queue = stringOption(context, "queue");
    if (queue !== undefined && context.positionals.length > 0) throw usageError("give either job ids or --queue <queue>, not both");
    if (queue !== undefined) return cancelWaiting(context, assertQueueName(queue));
    if (context.positionals.length === 0) throw usageError("cancel: missing the job id (or --queue <queue> --state …)");
    for (const option of ["state", "limit"]) if (stringOption(context, option) !== undefined) throw usageError(`--${option} goes with --queue <queue>`);
    const ids = context.positionals.map(jobIdArgument);
    return cancelByIds(context, [...new Set(ids)]);
  },
};

async function cancelByIds(context: CommandContext, ids: readonly string[]): Promise<number> {
  const { store } = await context.connect();
  const outcomes: IdOutcome[] = [];
  for (const id of ids) outcomes.push(await cancelOne(store, id, context.schema));
  const refusals = outcomes.flatMap((outcome) => (outcome.cancelled ? [] : [outcome.refusal]));
  if (ids.length === 1) {
    const [outcome] = outcomes;
    if (!outcome!.cancelled) throw outcome!.refusal;
    if (context.json) context.out.json({ id: outcome!.id, cancelled: true, wasRunning: outcome!.wasRunning });
    else context.out.line(cancelledLine(outcome!));
    return ExitCode.Ok;
  }
  if (context.json) {
    context.out.json({
      cancelled: outcomes.length - refusals.length,
      jobs: outcomes.map((outcome) =>
        outcome.cancelled ? outcome : { id: outcome.id, cancelled: false, code: outcome.refusal.code, message: outcome.refusal.message },
      ),
    });
  } else {
    for (const outcome of outcomes) {
      if (outcome.cancelled) context.out.line(cancelledLine(outcome));
      else context.out.note(`stint: ${outcome.refusal.message}`);
    }
    context.out.line(`Cancelled ${formatCount(outcomes.length - refusals.length)} of ${formatCount(outcomes.length)} jobs.`);
  }
  // "No such job" is the more alarming of the two: a script may have the wrong schema or a wrong id.
  return refusals.find((refusal) => refusal.exitCode === ExitCode.NotFound)?.exitCode ?? refusals[0]?.exitCode ?? ExitCode.Ok;
}

/** Cancels one job; the job is read first only to say whether a worker is told to stop it. */
async function cancelOne(store: JobStore, id: string, schema: string): Promise<IdOutcome> {
  const before = await store.getJob({ id });
  if (before !== undefined && (await store.cancelJob({ id }))) return { id, cancelled: true, wasRunning: before.state === "running" };
  const now = before === undefined ? undefined : await store.getJob({ id });
  if (now === undefined) return { id, cancelled: false, refusal: jobNotFound(id, schema) };
  return {
    id,
    cancelled: false,
    refusal: wrongStateError(`job ${id} has already finished (${now.state}): only blocked, queued, running or failed jobs can be cancelled`),
  };
}

function cancelledLine(outcome: { readonly id: string; readonly wasRunning: boolean }): string {
  return outcome.wasRunning ? `Cancelled job ${outcome.id}; it was running, and its worker is told to stop it.` : `Cancelled job ${outcome.id}.`;
}

async function cancelWaiting(context: CommandContext, queue: string): Promise<number> {
  const stateText = stringOption(context, "state");
  if (stateText === undefined) throw usageError("--queue needs --state queued, failed or queued,failed: which waiting jobs to cancel");
  const states = statesValue("--state", stateText);
  const waiting = states.filter((state): state is WaitingJobState => state === "queued" || state === "failed");
  if (waiting.length !== states.length) {
    throw configError(`--state can be queued and failed only: running jobs are cancelled by id (stint cancel <id…>), got ${JSON.stringify(stateText)}`);
  }
  const limitText = stringOption(context, "limit");
  const limit = limitText === undefined ? Number.POSITIVE_INFINITY : integerValue("--limit", limitText, 1, 100_000_000);
  const { store } = await context.connect();
  const [counts] = await store.countByQueue({ queues: [queue] });
  // Never more than waited at the start: a producer enqueueing meanwhile does not keep the command going.
  const total = Math.min(
    limit,
    waiting.reduce((sum, state) => sum + (counts?.counts[state] ?? 0), 0),
  );
  const what = `${waiting.join(" and ")} jobs of ${queue}`;
  const progress = startProgress(context.io.stderr, { label: `cancel ${waiting.join(",")} ${queue}`, total, unit: "jobs" });
  let result;
  try {
    result = await new QueueAdmin(store).cancelWaiting(queue, {
      states: waiting,
      max: total,
      signal: context.signal,
      onBatch: (done) => progress.update(done),
    });
  } finally {
    progress.stop();
  }
  const { cancelled, interrupted } = result;
  if (context.json) context.out.json({ queue, states: waiting, cancelled, interrupted });
  else if (interrupted) context.out.line(`Interrupted: cancelled ${formatCount(cancelled)} ${what}.`);
  else if (cancelled === 0) context.out.line(`No ${what} to cancel.`);
  else context.out.line(`Cancelled ${formatCount(cancelled)} ${what}.`);
  return interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}
