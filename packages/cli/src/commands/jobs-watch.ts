import { ExitCode, type JobEvent, type JobEventGap } from "@stint/core";
import { assertQueueName } from "@stint/core/driver";
import { PostgresJobEvents } from "@stint/postgres-driver";
import { listOption } from "../args/list-option";
import { usageError } from "../cli-error";
import type { Command, CommandContext } from "../command";

/**
 * `stint jobs watch [--queue Q[,Q…]]… [--json]`: prints every job event of
 * the schema (or of the given queues) live, from whatever process caused
 * it, one line each (a JSON document per line with `--json`), and a line
 * whenever events may have been missed. Runs until interrupted, then
 * exits 0.
 */
export const jobsWatchCommand: Command = {
  name: "jobs watch",
  summary: "Print job events (enqueued, started, progress, succeeded, failed, requeued, dead, cancelled) live until interrupted",
  usage: ["jobs watch [--queue <name>[,<name>…]]… [--json]"],
  args: { min: 0, max: 0 },
  json: true,
  options: {
    queue: {
      type: "string",
      multiple: true,
      value: "name[,name…]",
      description: "Only these queues (comma-separated, or --queue once per queue); default: every queue",
    },
  },
  notes: [
    "One line per event: time, type, queue, job id and attempt (and reason=retry|run-now|snooze|release for requeued); a line starting with `gap` when events may have been missed (re-read what you need).",
    'With --json, one JSON document per line: {type, jobId, queue, attempt, at, …} or {type: "gap", reason, …}.',
    "Events inside a transaction are printed when it commits. Ctrl-C ends it (exit 0).",
    "Example: stint jobs watch --queue send-invoice --json | jq -c 'select(.type == \"dead\")'",
  ],
  async run(context) {
    const queues = queueList(listOption(context, "queue"));
    const connection = await context.connect();
    const events = new PostgresJobEvents({
      connectionString: context.io.env["STINT_SESSION_DATABASE_URL"] ?? connection.target.url,
      schema: connection.schema,
      onError: (error) => context.out.note(`stint: warning: ${error.message}`),
    });
    try {
      if (context.signal.aborted) return ExitCode.Ok;
      const stopped = new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve(), { once: true }));
      const subscription = await events.subscribe(queues === undefined ? {} : { queues }, {
        onEvent: (event) => printEvent(context, event),
        onGap: (gap) => printGap(context, gap),
      });
      if (!context.json) context.out.note(`stint: watching job events of ${queues === undefined ? "every queue" : queues.join(", ")} (Ctrl-C to stop)`);
      await stopped;
      await subscription.close();
    } finally {
      await events.close();
    }
    return ExitCode.Ok;
  },
};

/** The names `--queue` gave, checked, or `undefined` for every queue. */
function queueList(queues: string[] | undefined): string[] | undefined {
  if (queues === undefined) return undefined;
  for (const queue of queues) {
    try {
      assertQueueName(queue);
    } catch (thrown) {
      throw usageError(`jobs watch: --queue ${JSON.stringify(queue)}: ${(thrown as Error).message}`);
    }
  }
  return queues;
}

function printEvent(context: CommandContext, event: JobEvent): void {
  if (context.json) {
    context.io.stdout.write(`${JSON.stringify({ ...event, at: event.at.toISOString() })}\n`);
    return;
  }
  context.out.line(`${event.at.toISOString()} ${event.type.padEnd(9)} ${event.queue} ${event.jobId} attempt ${event.attempt}${eventDetail(event)}`);
}

/** The small field an event carries, as the end of its text line: a progress value, an error code or why the job was requeued. */
function eventDetail(event: JobEvent): string {
  if (event.type === "progress") return "progress" in event ? ` progress=${JSON.stringify(event.progress)}` : "";
  if (event.type === "requeued") return ` reason=${event.reason}`;
  return "errorCode" in event && event.errorCode !== undefined ? ` ${event.errorCode}` : "";
}

function printGap(context: CommandContext, gap: JobEventGap): void {
  if (context.json) {
    const fields = gap.reason === "unavailable" ? { reason: gap.reason, error: gap.error.message } : gap;
    context.io.stdout.write(`${JSON.stringify({ type: "gap", ...fields, at: new Date().toISOString() })}\n`);
    return;
  }
  const why =
    gap.reason === "summarised"
      ? `one statement changed ${gap.count} jobs of ${gap.queue} (${gap.type}); not listed`
      : gap.reason === "reconnected"
        ? "the connection was lost and is back; events in between were missed"
        : `events cannot arrive now: ${gap.error.message}`;
  context.out.line(`${new Date().toISOString()} gap       ${why}`);
}
