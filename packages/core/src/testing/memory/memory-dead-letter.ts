import { deadLetterCopyMeta, deadLetterTarget, DEAD_LETTER_COPY_KEY, originError } from "../../job/dead-letter";
import { EMPTY_META } from "../../job/job-meta";
import type { JsonObject } from "../../job/json-types";
import { newJobRow, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/**
 * Routes a job that just died to the dead-letter queue its meta names (see
 * `deadLetterTarget`), as the PostgreSQL store does in the statement that
 * records the death: a new `queued` job there with the same payload,
 * priority, attempt budget and time limit, whose meta names the dead job;
 * the dead job's meta gets the copy's id. A copy is never routed again.
 */
export function routeDeadLetter(state: MemoryState, row: MemoryJobRow, now: number): void {
  const meta = row.metaJson === null ? EMPTY_META : (JSON.parse(row.metaJson) as JsonObject);
  const target = deadLetterTarget(meta);
  if (target === null) return;
  const origin = { jobId: row.id, queue: row.queue, attempts: row.attempts, errorCode: row.errorCode, error: originError(row.lastError) };
  const copy = newJobRow(
    state.nextId(),
    {
      queue: target,
      payloadJson: row.payloadJson,
      priority: row.priority,
      maxAttempts: row.maxAttempts,
      timeoutMs: row.timeoutMs,
      runAt: null,
      delayMs: 0,
      dedupeKey: null,
      metaJson: JSON.stringify(deadLetterCopyMeta(meta, origin)),
    },
    now,
  );
  state.insert(copy);
  row.metaJson = JSON.stringify({ ...meta, [DEAD_LETTER_COPY_KEY]: copy.id });
}
