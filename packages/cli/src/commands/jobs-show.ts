import { jobIdArgument } from "../args/option-values";
import { jobNotFound } from "../cli-error";
import type { Command } from "../command";
import { ErrorCode, ExitCode, type JobRecord, type JsonObject } from "@stint/core";
import { shellWord } from "../output/shell-word";
import { deadLetterLinks, formatDuration } from "@stint/core/internal";
import { jobJson } from "../output/job-json";
import { formatTime } from "../output/time-text";
import { attemptJson, formatAttempts, shownAttempts } from "../output/attempts-table";
import { formatJobLogs, jobLogJson } from "../output/job-log-text";

/**
 * `stint jobs show <id>`: every field of one job (meta and progress too,
 * its group or serial key with the command that lists that group's jobs),
 * its attempts (one row each: outcome, worker, start, duration, error),
 * the lines its handler wrote with `ctx.log` (per attempt) and its last
 * error in full, and its dead-letter links: the queue a death copies it to
 * and the copy it became, or, on a copy, the job it was made from.
 * `--json` prints the job's fields with `deadLetter`, and `history` and
 * `log` arrays. Exit 3 when there is no such job.
 */
export const jobsShowCommand: Command = {
  name: "jobs show",
  summary: "Show every field of one job, its attempts, and its last error in full",
  usage: ["jobs show <id> [--json]"],
  args: { min: 1, max: 1 },
  json: true,
  options: {},
  async run(context) {
    const id = jobIdArgument(context.positionals[0]!);
    const { store } = await context.connect();
    const job = await store.getJob({ id });
    if (job === undefined) throw jobNotFound(id, context.schema);
    const [history, logs] = await Promise.all([store.listAttempts({ jobId: id }), store.listJobLogs({ jobId: id })]);
    const attempts = shownAttempts(job, history);
    if (context.json) {
      context.out.json({ ...jobJson(job), deadLetter: deadLetterLinks(job.meta), history: attempts.map(attemptJson), log: logs.map(jobLogJson) });
      return ExitCode.Ok;
    }
    const fields: [string, string][] = [
      ["id", job.id],
      ["queue", job.queue],
      ["state", job.state],
      ["attempts", `${job.attempts} of ${job.maxAttempts}`],
      ["priority", String(job.priority)],
      ["run at", formatTime(job.runAt)],
      ["start by", job.startBy === null ? "-" : `${formatTime(job.startBy)}${job.errorCode === ErrorCode.Expired ? " (expired)" : ""}`],
      ["timeout", job.timeoutMs === null ? "-" : formatDuration(job.timeoutMs)],
      ["dedupe key", job.dedupeKey ?? "-"],
      ...groupFields(job),
      ...workflowFields(job),
      ["locked by", job.lockedBy ?? "-"],
      ["locked until", formatTime(job.lockedUntil)],
      ["created at", formatTime(job.createdAt)],
      ["started at", formatTime(job.startedAt)],
      ["finished at", formatTime(job.finishedAt)],
      ["duration", job.durationMs === null ? "-" : `${job.durationMs} ms`],
      ["updated at", formatTime(job.updatedAt)],
      ["error code", job.errorCode ?? "-"],
      ["progress", job.progress === null ? "-" : JSON.stringify(job.progress)],
      ...deadLetterFields(job.meta),
    ];
    const width = Math.max(...fields.map(([name]) => name.length));
    for (const [name, value] of fields) context.out.line(`${name.padEnd(width)}  ${value}`);
    context.out.line("");
    if (attempts.length > 0) {
      context.out.line("attempts:");
      context.out.line(indent(formatAttempts(attempts)));
    }
    if (Object.keys(job.meta).length > 0) {
      context.out.line("meta:");
      context.out.line(indent(JSON.stringify(job.meta, null, 2)));
    }
    if (logs.length > 0) {
      context.out.line("log:");
      context.out.line(indent(formatJobLogs(logs)));
    }
    context.out.line("payload:");
    context.out.line(indent(JSON.stringify(job.payload, null, 2)));
    if (job.result !== null && job.result !== undefined) {
      context.out.line("result:");
      context.out.line(indent(JSON.stringify(job.result, null, 2)));
    }
    if (job.lastError !== null) {
      context.out.line("last error:");
      context.out.line(indent(job.lastError));
    }
    return ExitCode.Ok;
  },
};

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/** The group or serial key of a job, with the command that lists its other jobs; nothing for a job without either. */
function groupFields(job: JobRecord): [string, string][] {
  if (job.group !== null) return [["group", `${job.group} (stint jobs list --queue ${job.queue} --group ${shellWord(job.group)})`]];
  if (job.serialKey !== null) return [["serial key", `${job.serialKey} (stint jobs list --queue ${job.queue} --serial-key ${shellWord(job.serialKey)})`]];
  return [];
}

/** The workflow a step belongs to and its step name, with the command that shows the workflow; nothing for a job of none. */
function workflowFields(job: JobRecord): [string, string][] {
  if (job.workflowId === null) return [];
  return [
    ["workflow", `${job.workflowId} (stint workflows show ${job.workflowId})`],
    ["step", job.step ?? "-"],
  ];
}

/** The dead-letter lines of a job: where a death sends it, the copy it became, or the job a copy came from. */
function deadLetterFields(meta: JsonObject): [string, string][] {
  const { queue, copyId, origin } = deadLetterLinks(meta);
  return [
    ...(queue === null ? [] : [["dead-letter queue", queue] as [string, string]]),
    ...(copyId === null ? [] : [["dead-letter copy", `job ${copyId} (stint jobs show ${copyId})`] as [string, string]]),
    ...(origin === null
      ? []
      : [["dead-letter of", `job ${origin.jobId} (${origin.queue}, ${origin.errorCode ?? "no code"}): ${origin.error ?? "-"}`] as [string, string]]),
  ];
}
