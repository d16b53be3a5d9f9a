import type { QueueControls, QueueRetention } from "../queue/queue-controls";
import type { FinishedState } from "../store/store-params";

/** One `deleteFinishedBefore` pass of a retention plan, without its batch size. */
export interface RetentionStep {
  readonly states: readonly FinishedState[];
  readonly olderThanMs: number;
  /** Only these queues (a queue's own retention, deleted row by row). */
  readonly queues?: readonly string[];
  /** Not these queues: they keep their jobs longer, and have steps of their own. */
  readonly exceptQueues?: readonly string[];
}

/** How long finished jobs of each state are kept, in ms, where no queue says otherwise. */
export type GlobalRetention = Readonly<Record<FinishedState, number>>;

const DAY_MS = 86_400_000;
const STATES: readonly FinishedState[] = ["succeeded", "cancelled", "dead"];
const FIELD: Readonly<Record<FinishedState, keyof QueueRetention>> = { succeeded: "succeededDays", cancelled: "cancelledDays", dead: "deadDays" };

/**
 * The passes that apply the global retention and every queue's own (for
 * the states in `only`, by default all three):
 *
 * - one pass per global cutoff (states that share one go together, so a
 *   store that drops whole day partitions drops each day once), leaving
 *   out the queues that keep some of those states longer;
 * - for each queue with a retention of its own that differs from the
 *   global one, a pass limited to it at its own cutoff: shorter ones delete
 *   what the global pass would keep, longer ones delete what they kept
 *   out of it. Passes limited to queues delete row by row, in bounded
 *   statements; the global pass stays the cheap one.
 *
 * @example
 * ```ts
 * planRetention({ succeeded: 7 * DAY, cancelled: 7 * DAY, dead: 30 * DAY }, [{ queue: "payments", retention: { deadDays: 365, … }, … }]);
 * // [{ states: ["succeeded", "cancelled"], olderThanMs: 7 days },
 * //  { states: ["dead"], olderThanMs: 30 days, exceptQueues: ["payments"] },
 * //  { states: ["dead"], olderThanMs: 365 days, queues: ["payments"] }]
 * ```
 */
export function planRetention(global: GlobalRetention, controls: readonly QueueControls[], only: readonly FinishedState[] = STATES): readonly RetentionStep[] {
  const planned = STATES.filter((state) => only.includes(state));
  const own = controls.filter((queue) => planned.some((state) => queue.retention[FIELD[state]] !== null));
  const steps: RetentionStep[] = [];
  for (const olderThanMs of [...new Set(planned.map((state) => global[state]))]) {
    const states = planned.filter((state) => global[state] === olderThanMs);
    const longer = own.filter((queue) => states.some((state) => cutoffOf(queue, state, global) > olderThanMs)).map((queue) => queue.queue);
    steps.push(Object.freeze({ states, olderThanMs, ...(longer.length === 0 ? {} : { exceptQueues: Object.freeze(longer) }) }));
    for (const queue of own) {
      const kept = longer.includes(queue.queue);
      const byCutoff = new Map<number, FinishedState[]>();
      for (const state of states) {
        const cutoff = cutoffOf(queue, state, global);
        if (kept || cutoff < olderThanMs) byCutoff.set(cutoff, [...(byCutoff.get(cutoff) ?? []), state]);
      }
      for (const [cutoff, queueStates] of byCutoff)
        steps.push(Object.freeze({ states: queueStates, olderThanMs: cutoff, queues: Object.freeze([queue.queue]) }));
    }
  }
  return Object.freeze(steps);
}

/**
 * The passes that apply the retention to some queues only: per state, one
 * pass per cutoff, each queue at its own days where it has them, else at
 * the global ones. Every pass is limited to queues, so it deletes row by row.
 *
 * @example
 * ```ts
 * planQueuesRetention(global, controls, ["audit", "mail"]);
 * // [{ states: ["succeeded"], olderThanMs: 90 days, queues: ["audit"] }, { states: ["succeeded"], olderThanMs: 7 days, queues: ["mail"] }, …]
 * ```
 */
export function planQueuesRetention(global: GlobalRetention, controls: readonly QueueControls[], queues: readonly string[]): readonly RetentionStep[] {
  const steps: RetentionStep[] = [];
  for (const state of STATES) {
    const byCutoff = new Map<number, string[]>();
    for (const queue of queues) {
      const own = controls.find((entry) => entry.queue === queue);
      const cutoff = own === undefined ? global[state] : cutoffOf(own, state, global);
      byCutoff.set(cutoff, [...(byCutoff.get(cutoff) ?? []), queue]);
    }
    for (const [olderThanMs, limited] of byCutoff) steps.push(Object.freeze({ states: [state], olderThanMs, queues: Object.freeze(limited) }));
  }
  return Object.freeze(steps);
}

function cutoffOf(queue: QueueControls, state: FinishedState, global: GlobalRetention): number {
  const days = queue.retention[FIELD[state]];
  return days === null ? global[state] : days * DAY_MS;
}
