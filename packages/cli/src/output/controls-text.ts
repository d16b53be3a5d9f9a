import { type QueueControls } from "@stint/core";
import { formatRateLimit } from "@stint/core/internal";

/**
 * A queue's controls in a few words: `paused, max 3 running, 100/min`, or
 * `-` when none is set.
 *
 * @example
 * ```ts
 * describeControls({ queue: "q", paused: true, maxRunning: 3, rateLimit: null, updatedAt: new Date() }); // "paused, max 3 running"
 * ```
 */
export function describeControls(controls: QueueControls | undefined): string {
  if (controls === undefined) return "-";
  const parts = [
    ...(controls.paused ? ["paused"] : []),
    ...(controls.maxRunning === null ? [] : [`max ${controls.maxRunning} running`]),
    ...(controls.rateLimit === null ? [] : [formatRateLimit(controls.rateLimit)]),
  ];
  return parts.length === 0 ? "-" : parts.join(", ");
}
