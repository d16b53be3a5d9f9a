import type { ClaimHold, QueueControls, QueueControlsChange, QueueRetention } from "../../queue/queue-controls";
import { assertQueueName } from "../../validation/names";
import { isWaiting, type MemoryJobRow, type MemoryQueueRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

const NO_RETENTION: QueueRetention = Object.freeze({ succeededDays: null, deadDays: null, cancelledDays: null });

/** How soon a claim held back by a full running cap is told to ask again (as the PostgreSQL store says). */
export const CAP_RETRY_MS = 200;

/**
 * Changes the fields of `change` (`null` removes a cap or a limit); a new
 * or changed rate limit starts with a full burst. `CheckedJobStore` has
 * checked the change and that the name is one a queue may hold.
 */
export function setQueueControls(state: MemoryState, queue: string, checked: QueueControlsChange): QueueControls {
  // As the PostgreSQL store: a name that breaks the rule only changes the row that already holds it.
  if (!state.queues.has(queue)) assertQueueName(queue);
  const now = state.now();
  const row: MemoryQueueRow = state.queues.get(queue) ?? {
    queue,
    paused: false,
    maxRunning: null,
    maxRunningPerGroup: null,
    rateLimit: null,
    rateTokens: null,
    rateRefilledAt: null,
    retention: NO_RETENTION,
    updatedAt: now,
  };
  if (checked.paused !== undefined) row.paused = checked.paused;
  if (checked.maxRunning !== undefined) row.maxRunning = checked.maxRunning;
  if (checked.maxRunningPerGroup !== undefined) row.maxRunningPerGroup = checked.maxRunningPerGroup;
  if (checked.rateLimit !== undefined) {
    row.rateLimit = checked.rateLimit === null ? null : Object.freeze({ limit: checked.rateLimit.limit, periodMs: checked.rateLimit.periodMs });
    row.rateTokens = null;
    row.rateRefilledAt = null;
  }
  if (checked.retention !== undefined) row.retention = Object.freeze({ ...row.retention, ...checked.retention });
  row.updatedAt = now;
  state.queues.set(queue, row);
  return toQueueControls(row);
}

/** Every queue's controls, by name. */
export function listQueueControls(state: MemoryState): readonly QueueControls[] {
  return Object.freeze([...state.queues.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0)).map(toQueueControls));
}

function toQueueControls(row: MemoryQueueRow): QueueControls {
  return Object.freeze({
    queue: row.queue,
    paused: row.paused,
    maxRunning: row.maxRunning,
    maxRunningPerGroup: row.maxRunningPerGroup,
    rateLimit: row.rateLimit,
    retention: row.retention,
    updatedAt: new Date(row.updatedAt),
  });
}

/** How many jobs a claim of `queue` may take, and why it was held back, if it was. */
export interface ClaimRoom {
  readonly room: number;
  readonly hold: ClaimHold | undefined;
}

/**
 * What a claim wanting `wanted` jobs may take under the queue's controls:
 * nothing from a paused queue; no more than the running cap leaves free;
 * no more than the rate limit's tokens, spending them on what can be
 * claimed now. When it holds a claim back from due jobs, it says when
 * asking again may give more.
 */
export function claimRoom(state: MemoryState, queue: string, wanted: number, now: number): ClaimRoom {
  const controls = state.queues.get(queue);
  if (controls === undefined || (!controls.paused && controls.maxRunning === null && controls.rateLimit === null)) return { room: wanted, hold: undefined };
  if (controls.paused) return { room: 0, hold: Object.freeze({ paused: true, retryAfterMs: null }) };
  let room = wanted;
  const running =
    controls.maxRunning === null
      ? 0
      : Math.min(
          count(state, queue, (row) => row.state === "running"),
          controls.maxRunning,
        );
  if (controls.maxRunning !== null) room = Math.min(room, controls.maxRunning - running);
  const tokens = controls.rateLimit === null ? 0 : tokensNow(controls, controls.rateLimit, now);
  if (controls.rateLimit !== null) room = Math.min(room, Math.floor(tokens));
  let retryAfterMs: number | null = null;
  let due = wanted;
  if (room < wanted) {
    due = count(state, queue, (row) => isWaiting(row.state) && row.runAt <= now);
    if (due > room) {
      if (controls.maxRunning !== null && room === controls.maxRunning - running) retryAfterMs = CAP_RETRY_MS;
      const { rateLimit } = controls;
      if (rateLimit !== null && room === Math.floor(tokens)) {
        retryAfterMs = Math.max(retryAfterMs ?? 0, Math.ceil(((1 - (tokens - Math.floor(tokens))) * rateLimit.periodMs) / rateLimit.limit), 1);
      }
    }
  }
  if (controls.rateLimit !== null) {
    controls.rateTokens = tokens - Math.min(room, due);
    controls.rateRefilledAt = now;
  }
  return { room, hold: retryAfterMs === null ? undefined : Object.freeze({ paused: false, retryAfterMs }) };
}

/** The bucket's tokens at `now`: refilled at `limit / periodMs` per millisecond, up to a burst of a tenth of a second's worth (at least one). */
function tokensNow(controls: MemoryQueueRow, rateLimit: { readonly limit: number; readonly periodMs: number }, now: number): number {
  const burst = Math.max(1, Math.min(rateLimit.limit, Math.floor((rateLimit.limit * 100) / rateLimit.periodMs)));
  const elapsed = Math.max(0, now - (controls.rateRefilledAt ?? now));
  return Math.min(burst, (controls.rateTokens ?? burst) + (elapsed * rateLimit.limit) / rateLimit.periodMs);
}

function count(state: MemoryState, queue: string, matches: (row: MemoryJobRow) => boolean): number {
  let total = 0;
  for (const row of state.rowsOf(queue)) if (matches(row)) total += 1;
  return total;
}
