import { ErrorCode, errorCodeOf, ExitCode, JobClient, type JobFailedError } from "@stint/core";
import { MAX_TIMER_MS } from "@stint/core/internal";
import { durationOption } from "../args/duration";
import { jobIdArgument } from "../args/option-values";
import { CliError, jobNotFound } from "../cli-error";
import { stringOption, type Command, type CommandContext } from "../command";

/**
 * `stint jobs wait <id>`: waits until the job finishes, woken by the
 * notification its finish sends (a read every 5 s covers a lost one).
 * Prints the result as JSON on stdout and exits 0 when it succeeded;
 * exits 5 when it is dead and 6 when it was cancelled, with the reason on
 * stderr. With `--json`, each of the three outcomes is one document on
 * stdout (`{id, queue, state, attempts, maxAttempts, result}` or
 * `{…, errorCode, lastError}`). Exit 3 when there is no such job, 124
 * when `--timeout` passes first, 130 when interrupted.
 */
export const jobsWaitCommand: Command = {
  name: "jobs wait",
  summary: "Wait until a job finishes; print its result (exit 0), or exit 5 (dead) or 6 (cancelled)",
  usage: ["jobs wait <id> [--timeout 30s] [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {
    timeout: { type: "string", value: "30s", description: "Give up after this long (exit 124); default: wait as long as it takes" },
  },
  notes: [
    "Exit codes: 0 succeeded, 3 no such job, 5 dead, 6 cancelled, 124 timed out, 130 interrupted.",
    "A job whose attempt failed with a retry scheduled is still waited for.",
    "Example: stint jobs wait 812 --timeout 5m && echo done",
  ],
  async run(context) {
    const id = jobIdArgument(context.positionals[0]!);
    const timeoutText = stringOption(context, "timeout");
    const timeoutMs = timeoutText === undefined ? undefined : durationOption("--timeout", timeoutText, { min: 1, max: MAX_TIMER_MS });
    const { store } = await context.connect();
    const client = new JobClient(store);
    let result: unknown;
    try {
      result = await client.waitFor(id, { signal: context.signal, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
    } catch (thrown) {
      return failedWait(context, id, thrown);
    }
    const job = await store.getJob({ id });
    if (context.json) {
      context.out.json({
        id,
        queue: job?.queue ?? null,
        state: "succeeded",
        attempts: job?.attempts ?? null,
        maxAttempts: job?.maxAttempts ?? null,
        result: result ?? null,
      });
    } else {
      context.out.line(JSON.stringify(result ?? null, null, 2));
    }
    return ExitCode.Ok;
  },
};

/** Turns a wait that did not end in success into its exit code (and output). */
function failedWait(context: CommandContext, id: string, thrown: unknown): number {
  if (context.signal.aborted) throw new CliError(ExitCode.Interrupted, `interrupted while waiting for job ${id}`);
  switch (errorCodeOf(thrown)) {
    case ErrorCode.JobNotFound:
      throw jobNotFound(id, context.schema);
    case ErrorCode.WaitTimeout:
      throw new CliError(ExitCode.TimedOut, (thrown as Error).message);
    case ErrorCode.JobFailed: {
      const failed = thrown as JobFailedError;
      const exitCode = failed.state === "dead" ? ExitCode.JobDead : ExitCode.JobCancelled;
      if (!context.json) throw new CliError(exitCode, failed.message);
      context.out.json({
        id,
        queue: failed.queue,
        state: failed.state,
        attempts: failed.attempts,
        maxAttempts: failed.maxAttempts,
        errorCode: failed.lastErrorCode,
        lastError: failed.lastError,
      });
      return exitCode;
    }
    default:
      throw thrown;
  }
}
