import { type QueueControls, type QueueRetention } from "@stint/core";
import { formatRateLimit } from "@stint/core/internal";

/**
 * A queue's controls in a few words: `paused, max 3 running, max 2 per
 * group, 100/min, keeps dead 365d`, or
 * `-` when none is set.
 *
 * @example
 * ```ts
 * describeControls({ queue: "q", paused: true, maxRunning: 3, maxRunningPerGroup: null, rateLimit: null, retention: { succeededDays: null, deadDays: 365, cancelledDays: null }, updatedAt: new Date() }); // "paused, max 3 running, keeps dead 365d"
 * ```
 */
export function describeControls(controls: QueueControls | undefined): string {
  if (controls === undefined) return "-";
  const parts = [
    ...(controls.paused ? ["paused"] : []),
    ...(controls.maxRunning === null ? [] : [`max ${controls.maxRunning} running`]),
    ...(controls.maxRunningPerGroup == null ? [] : [`max ${controls.maxRunningPerGroup} per group`]),
    ...(controls.rateLimit === null ? [] : [formatRateLimit(controls.rateLimit)]),
    ...(describeRetention(controls.retention) === "" ? [] : [describeRetention(controls.retention)]),
  ];
  return parts.length === 0 ? "-" : parts.join(", ");
}

/**
 * A queue's own retention in a few words: `keeps succeeded 90d, dead 365d`,
 * or `none` (by default `""`) when it keeps the global one.
 *
 * @example
 * ```ts
 * describeRetention({ succeededDays: null, deadDays: 365, cancelledDays: 0 }); // "keeps dead 365d, cancelled 0d"
 * ```
 */
export function describeRetention(retention: QueueRetention, none = ""): string {
  const kept = (
    [
      ["succeeded", retention.succeededDays],
      ["dead", retention.deadDays],
      ["cancelled", retention.cancelledDays],
    ] as const
  ).filter(([, days]) => days !== null);
  return kept.length === 0 ? none : `keeps ${kept.map(([state, days]) => `${state} ${days}d`).join(", ")}`;
}
