import { keepNewestLogLines, parseLogLine, type JobLogRecord } from "../../job/job-log";
import { mergeMetaPatch } from "../../job/meta-patch";
import type { JobLogAppend, MetaUpdate } from "../../store/job-store";
import { heldAttempt } from "./memory-finalize";
import { jobKey, type MemoryLogRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/** Merges a held attempt's `ctx.updateMeta` patch into its job's meta; false when the worker no longer holds it. */
export function updateJobMeta(state: MemoryState, params: MetaUpdate): boolean {
  const row = heldAttempt(state, params.workerId, params.job);
  if (row === undefined) return false;
  row.metaJson = mergeMetaPatch(row.metaJson, params.patchJson);
  row.updatedAt = state.now();
  return true;
}

/** Appends a held attempt's `ctx.log` lines, keeping the newest; false when the worker no longer holds it. */
export function appendJobLog(state: MemoryState, params: JobLogAppend): boolean {
  const row = heldAttempt(state, params.workerId, params.job);
  if (row === undefined) return false;
  let byAttempt = state.logs.get(row.id);
  if (byAttempt === undefined) state.logs.set(row.id, (byAttempt = new Map<number, MemoryLogRow>()));
  const stored = byAttempt.get(row.attempts) ?? { lines: [], droppedLines: 0 };
  for (const line of params.linesJson) JSON.parse(line);
  const { kept, dropped } = keepNewestLogLines([...stored.lines, ...params.linesJson], stored.droppedLines + params.droppedLines);
  byAttempt.set(row.attempts, { lines: kept, droppedLines: dropped });
  return true;
}

/** A job's logs by attempt number, oldest attempt first. */
export function listJobLogs(state: MemoryState, jobId: string): readonly JobLogRecord[] {
  const key = jobKey(jobId);
  const byAttempt = key === undefined ? undefined : state.logs.get(key);
  if (key === undefined || byAttempt === undefined) return Object.freeze([]);
  return Object.freeze(
    [...byAttempt.entries()]
      .sort(([a], [b]) => a - b)
      .map(([attempt, row]) =>
        Object.freeze({
          jobId: key,
          attempt,
          lines: Object.freeze(row.lines.map((line) => parseLogLine(JSON.parse(line)))),
          droppedLines: row.droppedLines,
        }),
      ),
  );
}
