import { JOB_EVENT_TYPES, type JobEvent, type JobEventType, type JobRequeueReason } from "@stint/core";

/** What one notification on the job-event channel says: the events it lists, or how many it summarised. */
export type JobEventNotice =
  | { readonly kind: "events"; readonly events: readonly JobEvent[] }
  | { readonly kind: "summary"; readonly type: JobEventType; readonly queue: string; readonly count: number };

/**
 * Reads a notification sent by migration 17's `notify_job_events`:
 * `{"k":<type>,"q":<queue>,"t":<epoch ms>,"j":[[id, attempt(, detail)], …]}`
 * or, for a summary, `{"k":…,"q":…,"t":…,"n":<count>}`. Returns
 * `undefined` for anything else.
 *
 * @example
 * ```ts
 * parseJobEventPayload('{"k":"started","q":"emails","t":1764190000000,"j":[["812",1]]}');
 * ```
 */
export function parseJobEventPayload(payload: string): JobEventNotice | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { k: type, q: queue, t: atMs, j: entries, n: count } = parsed as Record<string, unknown>;
  if (!isEventType(type) || typeof queue !== "string" || typeof atMs !== "number") return undefined;
  if (typeof count === "number") return Object.freeze({ kind: "summary", type, queue, count });
  if (!Array.isArray(entries)) return undefined;
  const at = new Date(atMs);
  const events: JobEvent[] = [];
  for (const entry of entries) {
    if (!Array.isArray(entry) || typeof entry[0] !== "string" || typeof entry[1] !== "number") return undefined;
    const event = eventOf(type, { jobId: entry[0], queue, attempt: entry[1], at }, entry.length > 2 ? { detail: entry[2] as unknown } : {});
    if (event === undefined) return undefined;
    events.push(event);
  }
  return Object.freeze({ kind: "events", events: Object.freeze(events) });
}

function isEventType(value: unknown): value is JobEventType {
  return typeof value === "string" && (JOB_EVENT_TYPES as readonly string[]).includes(value);
}

const REQUEUE_REASONS: readonly JobRequeueReason[] = ["retry", "run-now", "snooze", "release"];

function isRequeueReason(value: unknown): value is JobRequeueReason {
  return typeof value === "string" && (REQUEUE_REASONS as readonly string[]).includes(value);
}

/**
 * One event of `type`; `detail`, when sent, is the progress value, a
 * failure's error code, the number of log lines written or why the job was
 * requeued. `undefined` for a `requeued` entry without a known reason,
 * which no statement sends.
 */
function eventOf(
  type: JobEventType,
  fields: { readonly jobId: string; readonly queue: string; readonly attempt: number; readonly at: Date },
  extra: { readonly detail?: unknown },
): JobEvent | undefined {
  switch (type) {
    case "requeued":
      return isRequeueReason(extra.detail) ? Object.freeze({ type, ...fields, reason: extra.detail }) : undefined;
    case "progress":
      return Object.freeze({ type, ...fields, ...("detail" in extra ? { progress: extra.detail } : {}) });
    case "log":
      return Object.freeze({ type, ...fields, ...(typeof extra.detail === "number" ? { lines: extra.detail } : {}) });
    case "failed":
    case "dead":
      return Object.freeze({ type, ...fields, ...(typeof extra.detail === "string" ? { errorCode: extra.detail } : {}) });
    default:
      return Object.freeze({ type, ...fields });
  }
}
