import type { JobAttempt } from "../../store/job-store";
import { complete, heldAttempt } from "./memory-finalize";
import { parsedJson } from "./memory-rows";
import type { MemoryState } from "./memory-state";
import { inTransaction, type MemoryTransaction } from "./memory-transaction";

/**
 * Runs `effect` at most once per key, in a transaction: the first caller
 * of a key runs it and records the key with its result when it commits;
 * callers that come while it runs wait for it; later ones get the recorded
 * result without running anything. An effect that throws rolls back (its
 * writes are dropped, the key stays free) and its error comes back unchanged.
 */
export async function runEffectOnce(
  state: MemoryState,
  params: { readonly key: string; readonly jobId: string; readonly resultJson: (value: unknown) => string | null },
  effect: (transaction: MemoryTransaction) => Promise<unknown>,
): Promise<{ readonly ran: boolean; readonly result: unknown }> {
  for (;;) {
    const recorded = state.effects.get(params.key);
    if (recorded !== undefined) return Object.freeze({ ran: false, result: recorded.resultJson === null ? undefined : parsedJson(recorded.resultJson) });
    const running = state.effectRuns.get(params.key);
    if (running === undefined) break;
    await running;
  }
  const createdAt = state.now();
  try {
    const { value } = await inTransaction(effect, {
      opened: (control) => state.effectRuns.set(params.key, control.ended),
      commit: (result) => {
        const resultJson = params.resultJson(result);
        return () => state.effects.set(params.key, { jobId: params.jobId, resultJson, createdAt });
      },
    });
    return Object.freeze({ ran: true, result: value });
  } finally {
    state.effectRuns.delete(params.key);
  }
}

/**
 * Runs `work` in a transaction and marks the attempt succeeded with its
 * result when it commits, fenced like `completeJobs`: if the worker no
 * longer holds the attempt, `work`'s writes are dropped and `applied` is
 * false. A throw from `work` rolls back and comes back unchanged. The
 * success is the transaction's last write, after `work`'s: steps that
 * `work` added (`addWorkflowSteps`) are waited for before the success
 * settles the steps waiting for this one, as in PostgreSQL, where the
 * success is the transaction's last statement.
 */
export async function completeInTransaction(
  state: MemoryState,
  params: { readonly workerId: string; readonly job: JobAttempt; readonly resultJson: (value: unknown) => string | null },
  work: (transaction: MemoryTransaction) => Promise<unknown>,
): Promise<{ readonly applied: boolean; readonly value: unknown }> {
  let opened: MemoryTransaction | undefined;
  const { committed, value } = await inTransaction(
    (transaction) => {
      opened = transaction;
      return work(transaction);
    },
    {
      commit: (result) => {
        const row = heldAttempt(state, params.workerId, params.job);
        if (row === undefined) return undefined;
        const resultJson = params.resultJson(result);
        // Nothing yields between this fence and the commit, so the attempt is still held when the writes apply.
        opened!.onCommit(() => complete(state, row, resultJson, null, state.now()));
        return () => undefined;
      },
    },
  );
  return Object.freeze(committed ? { applied: true, value } : { applied: false, value: undefined });
}
