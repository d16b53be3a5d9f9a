import type { MemoryState } from "./memory-state";

/**
 * Deletes at most `limit` jobs in `states` that finished more than
 * `olderThanMs` ago (of `queues`, or not of `exceptQueues`), oldest first, with their attempt history (a death's
 * pending `onDead` hook stays: it runs without its job). Returns how many.
 */
export function deleteFinishedBefore(
  state: MemoryState,
  params: {
    readonly states: readonly string[];
    readonly olderThanMs: number;
    readonly limit: number;
    readonly queues?: readonly string[];
    readonly exceptQueues?: readonly string[];
  },
): number {
  const cutoff = state.now() - params.olderThanMs;
  const doomed = [...state.jobs.values()]
    .filter((row) => params.states.includes(row.state) && row.finishedAt !== null && row.finishedAt < cutoff)
    .filter((row) => params.queues === undefined || params.queues.includes(row.queue))
    .filter((row) => params.exceptQueues?.includes(row.queue) !== true)
    .sort((a, b) => a.finishedAt! - b.finishedAt! || a.seq - b.seq)
    .slice(0, params.limit);
  for (const row of doomed) state.remove(row);
  return doomed.length;
}

/** Deletes at most `limit` keys of the effects ledger recorded more than `olderThanMs` ago, oldest first; returns how many. */
export function deleteEffectsBefore(state: MemoryState, params: { readonly olderThanMs: number; readonly limit: number }): number {
  const cutoff = state.now() - params.olderThanMs;
  const doomed = [...state.effects.entries()]
    .filter(([, effect]) => effect.createdAt < cutoff)
    .sort(([, a], [, b]) => a.createdAt - b.createdAt)
    .slice(0, params.limit);
  for (const [key] of doomed) state.effects.delete(key);
  return doomed.length;
}
