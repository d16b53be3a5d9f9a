import { MAX_JOB_LOG_BYTES, MAX_JOB_LOG_LINES, type JobLogRecord } from "@stint/core";
import { isoTime } from "./time-text";

/**
 * A handler's text with terminal control characters (escape sequences,
 * carriage returns, …) shown as `\uXXXX`, so a log line cannot move the
 * cursor, recolour the terminal or rewrite the lines above it.
 *
 * @example
 * ```ts
 * printable("red \u001b[31mtext"); // "red \\u001b[31mtext"
 * ```
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The marker shown in place of the lines an attempt dropped (it keeps its newest ones). */
export function droppedLinesMarker(dropped: number): string {
  return `… ${dropped} earlier ${dropped === 1 ? "line" : "lines"} dropped (an attempt keeps its newest ${MAX_JOB_LOG_LINES} lines, ${MAX_JOB_LOG_BYTES / 1024} KiB)`;
}

/**
 * The `ctx.log` lines of a job, one block per attempt, for `stint jobs show`:
 *
 * ```text
 * attempt 2:
 *   … 3 earlier lines dropped (an attempt keeps its newest 100 lines, 32 KiB)
 *   2030-01-31T09:00:00.123Z  Uploaded the invoice  {"bytes":5120}
 * ```
 *
 * @example
 * ```ts
 * out.line(formatJobLogs(await store.listJobLogs({ jobId: "812" })));
 * ```
 */
export function formatJobLogs(logs: readonly JobLogRecord[]): string {
  const blocks: string[] = [];
  for (const log of logs) {
    const lines = [`attempt ${log.attempt}:`];
    if (log.droppedLines > 0) lines.push(`  ${droppedLinesMarker(log.droppedLines)}`);
    for (const line of log.lines) {
      const fields = line.fields === null ? "" : `  ${printable(JSON.stringify(line.fields))}`;
      lines.push(`  ${isoTime(line.at) ?? "-"}  ${printable(line.message)}${fields}`);
    }
    blocks.push(lines.join("\n"));
  }
  return blocks.join("\n");
}

/** An attempt's log as `--json` prints it: `{ attempt, droppedLines, lines: [{ at, message, fields }] }`. */
export function jobLogJson(log: JobLogRecord): Record<string, unknown> {
  return {
    attempt: log.attempt,
    droppedLines: log.droppedLines,
    lines: log.lines.map((line) => ({ at: isoTime(line.at), message: line.message, fields: line.fields })),
  };
}
